/* common.c - the helpers every subcommand calls (common.h). */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_fail(const char *what)
{
    fprintf(stderr, "numaplace: %s: %s (%s)\n", what, npl_last_error(), strerror(errno));
    return EXIT_FAILED;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        fprintf(stderr, "numaplace %s: option \"%s\" needs a value\n", cmd, arg);
    else
        fprintf(stderr, "numaplace %s: unknown option \"%s\" (try --help)\n", cmd, arg);
    return EXIT_USAGE;
}

#ifndef NPL_INSTALL_LIBDIR
#define NPL_INSTALL_LIBDIR "lib"
#endif

/* dir/rel, and for a bare file name also dir/../lib/numaplace/rel and dir/../LIBDIR/numaplace/rel
 * (an installed tree: P/bin/numaplace, P/LIBDIR/numaplace/); each tried is added to tried */
static int find_in(const char *dir, const char *rel, char *out, size_t size, char *tried, size_t tsize)
{
    static const char *const sub[] = {"", "../lib/numaplace/", "../" NPL_INSTALL_LIBDIR "/numaplace/"};
    int n = strchr(rel, '/') ? 1 : 3;
    if (n == 3 && !strcmp(NPL_INSTALL_LIBDIR, "lib"))
        n = 2;
    for (int i = 0; i < n; i++) {
        snprintf(out, size, "%s/%s%s", dir, sub[i], rel);
        if (access(out, R_OK) == 0)
            return 0;
        size_t used = strlen(tried);
        snprintf(tried + used, tsize - used, "%s%s", used ? ", " : "", out);
    }
    return -1;
}

int cli_find_file(const char *env_name, const char *const *rel, int n, char *out, size_t size)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return access(out, R_OK);
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        snprintf(out, size, "%s (/proc/self/exe unreadable; set %s)", n > 0 ? rel[0] : "?", env_name);
        return -1;
    }
    self[len] = 0;
    const char *dir = dirname(self);
    char tried[8192] = "";
    for (int i = 0; i < n; i++)
        if (find_in(dir, rel[i], out, size, tried, sizeof tried) == 0)
            return 0;
    /* the message names every place looked at, and the variable that overrides them */
    snprintf(out, size, "%s (looked for %s; %s unset)", n > 0 ? rel[0] : "?", tried, env_name);
    return -1;
}

int cli_topo(npl_topo **out, const char *synthetic, const npl_topo **use)
{
    *out = NULL;
    if (synthetic) {
        if (npl_topo_load_synthetic(out, synthetic) < 0)
            return -1;
        *use = *out;
        return 0;
    }
    *use = npl_topo_self();
    return *use ? 0 : -1;
}

FILE *cli_open_out(const char *cmd, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    const char *why = NULL;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
        why = "not a regular file";
        close(fd);
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (!f)
        fprintf(stderr, "numaplace %s: cannot write %s: %s\n", cmd, path,
                why ? why : errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    return f;
}

int cli_close_out(const char *cmd, FILE *f, const char *path, int bad)
{
    bad |= ferror(f);
    errno = EIO; /* when only ferror() knew */
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "numaplace %s: error writing %s: %s\n", cmd, path, strerror(errno));
        return EXIT_FAILED;
    }
    return 0;
}

size_t cli_utf8_len(const unsigned char *s)
{
    return npl__utf8_len(s, strnlen((const char *)s, 4)); /* the library's one check */
}
