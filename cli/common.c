/* SPDX-License-Identifier: BSD-3-Clause */
/* common.c - the helpers every subcommand calls (common.h). */
#include "common.h"
#include "profile/profile.h" /* base.h: npl__utf8_len, npl__term_text */

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

/* what kind of output path is (0 a regular file or none yet, 1 a character device written in
 * place), or -1 and why */
static int out_kind(const char *path, const char **why, char *dir, size_t dsize)
{
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            /* a link to a device (/dev/stdout to a terminal) is written in place; a link to a
             * file is not followed (the file it names is given instead) */
            if (stat(path, &sb) == 0 && S_ISCHR(sb.st_mode))
                return 1;
            *why = "it is a symbolic link (give the file it points to)";
            return -1;
        }
        if (S_ISCHR(sb.st_mode))
            return 1;
        if (S_ISDIR(sb.st_mode))
            *why = "it is a directory";
        else if (S_ISFIFO(sb.st_mode))
            *why = "it is a FIFO (an output goes to a regular file or a character device)";
        else if (S_ISSOCK(sb.st_mode))
            *why = "it is a socket (an output goes to a regular file or a character device)";
        else if (S_ISBLK(sb.st_mode))
            *why = "it is a block device (an output goes to a regular file or a character device)";
        if (!S_ISREG(sb.st_mode))
            return -1;
    } else if (errno != ENOENT) {
        *why = strerror(errno);
        return -1;
    }
    /* a regular file or none yet: its directory must take the temporary file */
    snprintf(dir, dsize, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, dsize, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (stat(dir, &sb) < 0) {
        *why = errno == ENOENT ? "its directory does not exist" : strerror(errno);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        *why = "its directory is not a directory";
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        *why = errno == EROFS ? "its directory is on a read-only file system"
                              : "its directory is not writable";
        return -1;
    }
    return 0;
}

int cli_out_check(const char *cmd, const char *path)
{
    const char *why = NULL;
    char dir[4200];
    int k = out_kind(path, &why, dir, sizeof dir);
    if (k < 0)
        fprintf(stderr, "numaplace %s: cannot write %s: %s\n", cmd, path, why);
    return k;
}

/* a character device, opened in place (never created, never truncated) */
static int open_in_place(const char *cmd, const char *path)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISCHR(sb.st_mode))) {
        close(fd);
        fd = -1;
        errno = EINVAL; /* replaced since it was checked */
    }
    if (fd < 0)
        fprintf(stderr, "numaplace %s: cannot write %s: %s\n", cmd, path, strerror(errno));
    return fd;
}

int cli_write_out(const char *cmd, const char *path, const char *text, size_t len)
{
    int k = cli_out_check(cmd, path);
    if (k < 0)
        return EXIT_FAILED;
    int fd;
    char tmp[4200] = "";
    if (k == 1) {
        if ((fd = open_in_place(cmd, path)) < 0)
            return EXIT_FAILED;
    } else {
        if (strlen(path) + 32 >= sizeof tmp) {
            fprintf(stderr, "numaplace %s: cannot write %s: %s\n", cmd, path, strerror(ENAMETOOLONG));
            return EXIT_FAILED;
        }
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    int ok = fd >= 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        done += ok ? (size_t)w : 0;
    }
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && ok)
        ok = 0, e = errno;
    if (ok && *tmp && rename(tmp, path) < 0)
        ok = 0, e = errno;
    if (!ok) {
        if (*tmp)
            unlink(tmp);
        fprintf(stderr, "numaplace %s: cannot write %s: %s\n", cmd, path, strerror(e ? e : EIO));
        return EXIT_FAILED;
    }
    return 0;
}

FILE *cli_open_out(const char *cmd, const char *path)
{
    int k = cli_out_check(cmd, path);
    if (k < 0)
        return NULL;
    int fd = k == 1 ? open_in_place(cmd, path)
                    : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    const char *why = NULL;
    if (k == 0 && fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
        why = "not a regular file";
        close(fd);
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (!f && k == 0)
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

/* the rank an MPI launcher gave this process, from the first of its variables that is set */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                        "SLURM_PROCID", NULL};

int cli_expand_name(const char *cmd, const char *opt, const char *pattern, int pid, char *out,
                    size_t size)
{
    size_t o = 0;
    for (const char *c = pattern; *c; c++) {
        char piece[512];
        if (*c != '%') {
            piece[0] = *c, piece[1] = 0;
        } else if (c[1] == '%' || (c[1] == 'p' && pid < 0)) {
            snprintf(piece, sizeof piece, pid < 0 ? "%%%c" : "%%", c[1]); /* later, or now */
            c++;
        } else if (c[1] == 'p') {
            snprintf(piece, sizeof piece, "%d", pid);
            c++;
        } else if (c[1] == 'h') {
            if (gethostname(piece, sizeof piece - 1) < 0)
                snprintf(piece, sizeof piece, "localhost");
            piece[sizeof piece - 1] = 0;
            piece[strcspn(piece, "/")] = 0; /* a name, never a path */
            c++;
        } else if (c[1] == 'r') {
            const char *v = NULL;
            for (int i = 0; rank_vars[i] && !v; i++)
                if ((v = getenv(rank_vars[i])) && (!*v || strspn(v, "0123456789") != strlen(v)))
                    v = NULL;
            if (!v) {
                fprintf(stderr, "numaplace %s: %s %s: %%r is the MPI rank, and none of "
                                "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID holds one "
                                "(run it under mpirun or srun)\n", cmd, opt, pattern);
                return EXIT_USAGE;
            }
            snprintf(piece, sizeof piece, "%s", v);
            c++;
        } else {
            fprintf(stderr, "numaplace %s: %s %s: %%%c is not %%r (the MPI rank), %%p (the pid), "
                            "%%h (the host) or %%%% (a percent sign)\n", cmd, opt, pattern,
                    c[1] ? c[1] : ' ');
            return EXIT_USAGE;
        }
        size_t k = strlen(piece);
        if (o + k >= size) {
            fprintf(stderr, "numaplace %s: %s %s: the name is too long\n", cmd, opt, pattern);
            return EXIT_USAGE;
        }
        memcpy(out + o, piece, k);
        o += k;
    }
    out[o] = 0;
    return 0;
}
