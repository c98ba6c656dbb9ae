/* SPDX-License-Identifier: BSD-3-Clause */
/* run_profile.c - numaplace run --profile FILE: the profile is read (strictly) and checked against
 * the program before it starts: a corrupt, truncated or foreign file, or a profile of another
 * program (another build-id; without build-ids, another path), is one line on stderr and exit
 * status 2, and the program is not started. A pinning other than the one the profile was taken
 * under is a warning: the advice assumed that thread -> node mapping; so are arrays without
 * stored advice (left to first touch). */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "run_args.h"
#include "sites.h"

#include "profile/profile.h"

#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

static char remapped[PATH_MAX]; /* the rebuilt program's profile, or the expanded name */
const char *run_profile_apply_path(void) { return *remapped ? remapped : NULL; }

/* a profile of this program before it was rebuilt: its sites found again in the new binary
 * (cli/sites.c), the profile so matched handed to the interposer in a memfd (inherited as
 * /proc/self/fd/N). 0 when at least one array was found (said), else -1 */
static int rematch(struct npl_profile *p, const char *file, const char *path, const char *bid)
{
    char err[512];
    uint32_t found, total;
    if (sites_rematch(p, path, bid, &found, &total, err, sizeof err) < 0) {
        fprintf(stderr, "numaplace run: --profile %s: the program was rebuilt and %s\n", file, err);
        return -1;
    }
    if (!found) {
        fprintf(stderr, "numaplace run: --profile %s: the program was rebuilt: none of its %u "
                        "arrays found again by function and file:line (a build without -g, or "
                        "the code changed)\n", file, total);
        return -1;
    }
    size_t len;
    char *text = npl__profile_format(p, &len);
    int fd = text ? memfd_create("numaplace-profile-rebuilt", 0) : -1;
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    free(text);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "numaplace run: --profile %s: cannot hold the profile matched again\n", file);
        return -1;
    }
    snprintf(remapped, sizeof remapped, "/proc/self/fd/%d", fd);
    fprintf(stderr, "numaplace run: --profile %s: the program was rebuilt: %u of %u arrays found "
                    "again by function, file:line and ordinal; %u not found (the default applies "
                    "to them)\n", file, found, total, total - found);
    return 0;
}

int run_check_profile(const char *pattern, const char *prog, const char *pin)
{
    char err[1024], file[PATH_MAX];
    int rc = cli_expand_name("run", "--profile", pattern, (int)getpid(), file, sizeof file);
    if (rc) /* p.%r.json: this rank's profile */
        return rc;
    if (strcmp(file, pattern) && !realpath(file, remapped))
        snprintf(remapped, sizeof remapped, "%s", file);
    struct npl_profile *p = NULL;
    if (npl__profile_load(file, &p, err, sizeof err) < 0) {
        one_line(err);
        fprintf(stderr, "numaplace run: --profile: %s\n", err);
        return EXIT_USAGE;
    }
    char bid[160] = "", real[PATH_MAX];
    npl__elf_build_id(prog, bid, sizeof bid);
    const char *path = realpath(prog, real) ? real : prog;
    if (!npl__profile_same_program(p, path, bid) && p->program_build_id && *bid &&
        p->program_path && !strcmp(p->program_path, path) && rematch(p, file, path, bid) == 0) {
        /* rebuilt in place: matched by function, file:line and ordinal */
    } else if (!npl__profile_same_program(p, path, bid)) {
        char was[256] = "", now[256] = "";
        if (p->program_build_id)
            snprintf(was, sizeof was, " (build-id %.128s)", p->program_build_id);
        if (*bid)
            snprintf(now, sizeof now, " (build-id %.128s)", bid);
        char t1[8192], t2[1024];
        fprintf(stderr, "numaplace run: --profile %s is a profile of %s%s, not of %s%s: profile "
                        "this program (numaplace profile -- %s ...)\n", file,
                npl__term_text(p->program_path ? p->program_path : "?", t1, sizeof t1),
                npl__term_text(was, t2, sizeof t2), path, now, prog);
        if (p->program_build_id)
            fprintf(stderr, "numaplace run: (the build-ids differ: the program was rebuilt or is "
                            "another one)\n");
        rc = EXIT_USAGE;
    }
    /* the pinning the profile was taken under */
    if (!rc) {
        char t1[4096];
        const char *was = p->binding == NPL_BIND_PIN && p->binding_detail
                              ? npl__term_text(p->binding_detail, t1, sizeof t1) : NULL;
        if (p->binding == NPL_BIND_PIN && (!pin || strcmp(pin, was ? was : "")))
            fprintf(stderr, "numaplace run: warning: the profile was taken with --pin %s, this "
                            "run %s%s: its advice assumes that thread -> node mapping\n",
                    was ? was : "?", pin ? "pins with " : "does not pin", pin ? pin : "");
        else if (p->binding != NPL_BIND_PIN && pin)
            fprintf(stderr, "numaplace run: warning: the profile was taken %s%s, this run pins "
                            "with --pin %s: its advice assumes the profiled thread -> node "
                            "mapping\n", p->binding == NPL_BIND_OMP ? "under " : "without pinning",
                    p->binding == NPL_BIND_OMP && p->binding_detail
                        ? npl__term_text(p->binding_detail, t1, sizeof t1) : "", pin);
    }
    /* arrays without stored advice are left to first touch: say so, not only under -v */
    uint32_t bare = 0;
    for (uint32_t i = 0; !rc && i < p->narrays; i++)
        bare += !p->arrays[i].has_advice;
    if (bare)
        fprintf(stderr, "numaplace run: warning: %u of the %u arrays of --profile %s have no stored "
                        "advice and are left to first touch (numaplace advise --write %s %s "
                        "stores it)\n", bare, p->narrays, file, file, file);
    npl__profile_free(p);
    return rc;
}
