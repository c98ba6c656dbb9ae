/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c - the platform config file: ONE format for the whole project (docs/CONFIG.md).
 *
 *   # comment                   (also after a value: " # ...")
 *   [machine]
 *   nodes = 0-3                 nodes to use (OS ids)
 *   cpus = 0-15                 CPUs to use
 *   [threads]
 *   pin = auto                  compact | scatter | CPU list | auto (MAi: pin for bind policies) | none
 *   [policy]
 *   default = cyclic            any policy string (npl_policy_parse)
 *   threshold = 1048576         bytes (K/M/G): `numaplace run` places allocations this large
 *   [factors]                   written by `numaplace measure`
 *   nodes = 0,1                 the order of the matrix columns
 *   latency_ns.0 = 80.5 131.2   one row per CPU node: ns per dependent load to each memory node
 *   bandwidth_mbs.0 = 9000 5000 one row per CPU node: triad MB/s to each memory node
 *   migrate_pages_s = 250000    pages a second npl_migrate_range moves between two nodes
 *   measured = <free text>
 *
 * Pure (no system call but reading the file). Errors name the file and line. */
#define _GNU_SOURCE
#include "defaults/defaults.h"
#include "base/number.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_LINE 4096

struct entry {
    char *section, *key, *value;
    int line;
};
struct npl_config {
    struct entry *e;
    int n, cap;
    char source[256];
};

int npl_config_new(npl_config **out)
{
    if (!out)
        return npl__fail(EINVAL, "NULL config pointer");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : npl__fail(ENOMEM, "out of memory");
}

void npl_config_free(npl_config *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++) {
        free(c->e[i].section);
        free(c->e[i].key);
        free(c->e[i].value);
    }
    free(c->e);
    free(c);
}

const char *npl_config_source(const npl_config *c) { return c ? c->source : ""; }

static struct entry *find(const npl_config *c, const char *section, const char *key)
{
    for (int i = 0; c && i < c->n; i++)
        if (!strcmp(c->e[i].section, section) && !strcmp(c->e[i].key, key))
            return &c->e[i];
    return NULL;
}

const char *npl_config_get(const npl_config *c, const char *section, const char *key)
{
    if (!c || !section || !key) {
        npl__fail(EINVAL, "NULL argument");
        return NULL;
    }
    struct entry *e = find(c, section, key);
    if (!e) /* not set: ENOENT, but not an error worth a debug line */
        npl__note(ENOENT, "[%s] %s is not set", section, key);
    return e ? e->value : NULL;
}

/* ---- validation of one value ---- */
static int is_row_key(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(key, prefix, n) || key[n] != '.' || !key[n + 1])
        return 0;
    return strspn(key + n + 1, "0123456789") == strlen(key + n + 1) && strlen(key + n + 1) < 6;
}

/* numbers separated by blanks: count them (all finite, >= 0) or -1 */
static int parse_row(const char *v, double *out, int max)
{
    int n = 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end == p || errno || !isfinite(d) || d < 0 || (*end && *end != ' ' && *end != '\t'))
            return -1;
        if (n < max && out)
            out[n] = d;
        n++;
        p = end;
    }
    return n;
}

/* a size from 1 byte with K/M/G (base/number.h), as numaplace run's --threshold */
static int check_size(const char *v)
{
    uint64_t x;
    return npl__parse_size(v, 1, NPL__SIZE_MAX, &x);
}

static int validate(const char *name, int line, const char *section, const char *key,
                    const char *value)
{
    int *list = NULL, n = 0;
#define BAD(...) npl__fail(EINVAL, __VA_ARGS__)
    if (!strcmp(section, "machine")) {
        if (strcmp(key, "nodes") && strcmp(key, "cpus"))
            return BAD("%s:%d: unknown key \"%s\" in [machine] (nodes, cpus)", name, line, key);
        if (npl__parse_list(value, NPL__MAX_ID, key, &list, &n) < 0)
            return BAD("%s:%d: [machine] %s: %s", name, line, key, npl_last_error());
    } else if (!strcmp(section, "threads")) {
        if (strcmp(key, "pin"))
            return BAD("%s:%d: unknown key \"%s\" in [threads] (pin)", name, line, key);
        if (strcmp(value, "compact") && strcmp(value, "scatter") && strcmp(value, "auto") &&
            strcmp(value, "none") && npl__parse_list(value, NPL__MAX_ID, "CPU", &list, &n) < 0)
            return BAD("%s:%d: [threads] pin = \"%s\": use compact, scatter, auto, none or a CPU "
                       "list", name, line, value);
    } else if (!strcmp(section, "policy")) {
        if (!strcmp(key, "default")) {
            npl_policy *p;
            if (npl_policy_parse(&p, value) < 0)
                return BAD("%s:%d: [policy] default: %s", name, line, npl_last_error());
            npl_policy_free(p);
        } else if (!strcmp(key, "threshold")) {
            if (check_size(value) < 0)
                return BAD("%s:%d: [policy] threshold = \"%s\" is not a positive byte count "
                           "(at most 2^63-1; K, M, G allowed)", name, line, value);
        } else {
            return BAD("%s:%d: unknown key \"%s\" in [policy] (default, threshold)", name, line,
                       key);
        }
    } else if (!strcmp(section, "factors")) {
        if (!strcmp(key, "nodes")) {
            if (npl__parse_list(value, NPL__MAX_ID, "node", &list, &n) < 0)
                return BAD("%s:%d: [factors] nodes: %s", name, line, npl_last_error());
        } else if (is_row_key(key, "latency_ns") || is_row_key(key, "bandwidth_mbs")) {
            if (parse_row(value, NULL, 0) <= 0)
                return BAD("%s:%d: [factors] %s: expected non-negative numbers separated by "
                           "blanks", name, line, key);
        } else if (!strcmp(key, "migrate_pages_s")) {
            double d;
            if (parse_row(value, &d, 1) != 1 || !(d > 0))
                return BAD("%s:%d: [factors] migrate_pages_s = \"%s\" is not one positive "
                           "number (pages a second)", name, line, value);
        } else if (strcmp(key, "measured")) {
            return BAD("%s:%d: unknown key \"%s\" in [factors] (nodes, latency_ns.N, "
                       "bandwidth_mbs.N, migrate_pages_s, measured)", name, line, key);
        }
    } else {
        return BAD("%s:%d: unknown section [%s] (machine, threads, policy, factors)", name, line,
                   section);
    }
#undef BAD
    free(list);
    return 0;
}

static int put(npl_config *c, const char *section, const char *key, const char *value, int line)
{
    struct entry *e = find(c, section, key);
    if (e) {
        char *v = strdup(value);
        if (!v)
            return npl__fail(ENOMEM, "out of memory");
        free(e->value);
        e->value = v;
        e->line = line;
        return 0;
    }
    if (c->n == c->cap) {
        int nc = c->cap ? c->cap * 2 : 16;
        struct entry *ne = realloc(c->e, (size_t)nc * sizeof *ne);
        if (!ne)
            return npl__fail(ENOMEM, "out of memory");
        c->e = ne;
        c->cap = nc;
    }
    e = &c->e[c->n];
    e->section = strdup(section);
    e->key = strdup(key);
    e->value = strdup(value);
    e->line = line;
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        free(e->value);
        return npl__fail(ENOMEM, "out of memory");
    }
    c->n++;
    return 0;
}

/* Whole-file consistency: matrix rows match [factors] nodes; pins inside [machine] cpus;
 * the default policy's nodes inside [machine] nodes. */
static int cross_check(const npl_config *c, const char *name)
{
    const struct entry *fn = find(c, "factors", "nodes");
    int *fnodes = NULL, nf = 0, rc = 0;
    if (fn)
        npl__parse_list(fn->value, NPL__MAX_ID, "node", &fnodes, &nf);
    int rows = 0;
    for (int i = 0; i < c->n && !rc; i++) {
        const struct entry *e = &c->e[i];
        if (strcmp(e->section, "factors") ||
            (!is_row_key(e->key, "latency_ns") && !is_row_key(e->key, "bandwidth_mbs")))
            continue;
        rows++;
        if (!fn) {
            rc = npl__fail(EINVAL, "%s:%d: [factors] %s given before/without [factors] nodes",
                           name, e->line, e->key);
            break;
        }
        uint64_t id = 0; /* is_row_key: at most 5 digits */
        npl__parse_count(strchr(e->key, '.') + 1, 0, NPL__MAX_ID, &id);
        int node = (int)id, found = npl__in_list(node, fnodes, nf);
        int cnt = parse_row(e->value, NULL, 0);
        if (!found)
            rc = npl__fail(EINVAL, "%s:%d: [factors] %s: node %d is not in [factors] nodes", name,
                           e->line, e->key, node);
        else if (cnt != nf)
            rc = npl__fail(EINVAL, "%s:%d: [factors] %s has %d values, [factors] nodes has %d "
                           "(truncated or contradictory)", name, e->line, e->key, cnt, nf);
    }
    if (!rc && fn && rows == 0)
        rc = npl__fail(EINVAL, "%s:%d: [factors] nodes without any latency_ns/bandwidth_mbs row",
                       name, fn->line);
    free(fnodes);
    if (rc)
        return rc;
    /* pins and default policy against [machine] */
    const struct entry *mc = find(c, "machine", "cpus"), *mn = find(c, "machine", "nodes");
    const struct entry *pin = find(c, "threads", "pin"), *def = find(c, "policy", "default");
    if (mc && pin && isdigit((unsigned char)pin->value[0])) {
        int *a = NULL, *b = NULL, na = 0, nb = 0;
        npl__parse_list(mc->value, NPL__MAX_ID, "CPU", &a, &na);
        npl__parse_list(pin->value, NPL__MAX_ID, "CPU", &b, &nb);
        for (int i = 0; i < nb && !rc; i++)
            if (!npl__in_list(b[i], a, na))
                rc = npl__fail(EINVAL, "%s:%d: [threads] pin names CPU %d, which [machine] cpus "
                               "(line %d) excludes (contradictory)", name, pin->line, b[i], mc->line);
        free(a);
        free(b);
    }
    if (!rc && mn && def) {
        int *a = NULL, na = 0;
        npl_policy *p = NULL;
        npl__parse_list(mn->value, NPL__MAX_ID, "node", &a, &na);
        if (npl_policy_parse(&p, def->value) == 0) {
            const int *pn = p->nnodes ? p->nodes : p->subset;
            int np = p->nnodes ? p->nnodes : p->nsubset;
            for (int i = 0; i < np && !rc; i++)
                if (!npl__in_list(pn[i], a, na))
                    rc = npl__fail(EINVAL, "%s:%d: [policy] default names node %d, which "
                                   "[machine] nodes (line %d) excludes (contradictory)", name,
                                   def->line, pn[i], mn->line);
        }
        npl_policy_free(p);
        free(a);
    }
    return rc;
}

static void trim(char **s)
{
    while (**s == ' ' || **s == '\t')
        (*s)++;
    char *e = *s + strlen(*s);
    while (e > *s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = 0;
}

/* A "[name]" header: the section it opens, or -1. */
static int parse_section(char *s, char *section, size_t size, const char *name, int lineno)
{
    char *close = strchr(s, ']');
    if (!close || close[1])
        return npl__fail(EINVAL, "%s:%d: bad section header \"%s\" (expected [name])", name,
                         lineno, s);
    *close = 0;
    s++;
    trim(&s);
    if (!*s || strlen(s) >= size || strspn(s, "abcdefghijklmnopqrstuvwxyz_") != strlen(s))
        return npl__fail(EINVAL, "%s:%d: bad section name \"%s\"", name, lineno, s);
    if (strcmp(s, "machine") && strcmp(s, "threads") && strcmp(s, "policy") && strcmp(s, "factors"))
        return npl__fail(EINVAL, "%s:%d: unknown section [%s] (machine, threads, policy, factors)",
                         name, lineno, s);
    snprintf(section, size, "%s", s);
    return 0;
}

/* A "key = value" line of `section`, validated and stored. */
static int parse_entry(npl_config *c, char *s, const char *section, const char *name, int lineno)
{
    char *eq = strchr(s, '=');
    if (!eq)
        return npl__fail(EINVAL, "%s:%d: expected \"key = value\" or \"[section]\", got \"%s\"",
                         name, lineno, s);
    *eq = 0;
    char *key = s, *value = eq + 1;
    trim(&key);
    trim(&value);
    if (!*key || strspn(key, "abcdefghijklmnopqrstuvwxyz_0123456789.") != strlen(key))
        return npl__fail(EINVAL, "%s:%d: bad key \"%s\"", name, lineno, key);
    if (!*section)
        return npl__fail(EINVAL, "%s:%d: \"%s\" outside any [section]", name, lineno, key);
    if (!*value)
        return npl__fail(EINVAL, "%s:%d: %s has no value", name, lineno, key);
    if (find(c, section, key))
        return npl__fail(EINVAL, "%s:%d: [%s] %s given twice (first on line %d)", name, lineno,
                         section, key, find(c, section, key)->line);
    if (validate(name, lineno, section, key, value) < 0)
        return -1;
    return put(c, section, key, value, lineno);
}

/* The next line of text into `line` (at most CFG_MAX_LINE bytes, no control characters). */
static int next_line(const char *text, size_t len, size_t *pos, char *line, const char *name,
                     int lineno)
{
    const char *nl = memchr(text + *pos, '\n', len - *pos);
    size_t l = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
    if (l > CFG_MAX_LINE)
        return npl__fail(EINVAL, "%s:%d: line longer than %d bytes", name, lineno, CFG_MAX_LINE);
    memcpy(line, text + *pos, l);
    line[l] = 0;
    *pos += l + (nl ? 1 : 0);
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t' && line[i] != '\r')
            return npl__fail(EINVAL, "%s:%d: control character 0x%02x (binary data?)", name,
                             lineno, (unsigned char)line[i]);
    return 0;
}

int npl_config_parse(npl_config **out, const char *text, size_t len, const char *name)
{
    if (!out || (!text && len))
        return npl__fail(EINVAL, "NULL argument");
    *out = NULL;
    name = name ? name : "config";
    if (len > CFG_MAX_BYTES)
        return npl__fail(EFBIG, "%s: %zu bytes: too large for a config file (at most %u)", name,
                         len, CFG_MAX_BYTES);
    if (len && memchr(text, 0, len))
        return npl__fail(EINVAL, "%s: contains NUL bytes: a binary file, not a config file", name);
    npl_config *c;
    if (npl_config_new(&c) < 0)
        return -1;
    snprintf(c->source, sizeof c->source, "%s", name);
    char section[64] = "";
    char *line = malloc(CFG_MAX_LINE + 1);
    if (!line) {
        npl_config_free(c);
        return npl__fail(ENOMEM, "out of memory");
    }
    size_t pos = 0;
    int lineno = 0, rc = 0;
    while (pos < len && !rc) {
        if ((rc = next_line(text, len, &pos, line, name, ++lineno)) < 0)
            break;
        char *s = line;
        char *hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        trim(&s);
        if (*s == '[')
            rc = parse_section(s, section, sizeof section, name, lineno);
        else if (*s)
            rc = parse_entry(c, s, section, name, lineno);
    }
    free(line);
    if (!rc)
        rc = cross_check(c, name);
    if (rc) {
        int e = errno;
        npl_config_free(c);
        errno = e;
        return -1;
    }
    *out = c;
    return 0;
}

int npl_config_load(npl_config **out, const char *path)
{
    if (!out)
        return npl__fail(EINVAL, "NULL config pointer");
    *out = NULL;
    char buf[4096];
    if (!path) {
        const char *env = getenv("NUMAPLACE_CONFIG"), *home = getenv("HOME");
        if (env && *env) {
            path = env;
        } else {
            path = NULL;
            /* a path that cannot exist (too long, or below a file: ENAMETOOLONG, ENOTDIR) is
             * no file, as a missing one */
            if (home && *home &&
                snprintf(buf, sizeof buf, "%s/.config/numaplace/config", home) < (int)sizeof buf &&
                access(buf, F_OK) == 0) /* there: read it, or say why not */
                path = buf;
            if (!path) {
                if (access("/etc/numaplace.conf", F_OK) < 0)
                    return npl_config_new(out); /* no file anywhere: an empty config */
                path = "/etc/numaplace.conf";
            }
        }
    }
    /* O_NONBLOCK: a FIFO must not block the caller forever; only regular files are read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return npl__fail(errno, "cannot open config file %s: %s", path, strerror(errno));
    struct stat sb;
    int bad = fstat(fd, &sb) < 0        ? errno
              : S_ISDIR(sb.st_mode)     ? EISDIR
              : !S_ISREG(sb.st_mode)    ? EINVAL
                                        : 0;
    FILE *f = bad ? NULL : fdopen(fd, "r");
    if (!f) {
        int e = bad ? bad : errno;
        close(fd);
        return npl__fail(e, "cannot read config file %s: %s", path,
                         e == EINVAL ? "not a regular file" : strerror(e));
    }
    /* a buffer the size of the file (a config is a few hundred bytes), grown while it grows up
     * to the limit: one of CFG_MAX_BYTES was a large allocation, which the interposer of
     * `numaplace profile` tracked as an array of the program calling npl_alloc_auto (its
     * ordinals then shifted by one) */
    size_t cap = (size_t)sb.st_size < CFG_MAX_BYTES ? (size_t)sb.st_size + 1 : CFG_MAX_BYTES + 1;
    char *text = malloc(cap), *grown;
    size_t n = 0;
    int err = text ? 0 : ENOMEM;
    errno = 0;
    while (!err) {
        n += fread(text + n, 1, cap - n, f);
        if (ferror(f)) {
            err = errno ? errno : EIO;
        } else if (n < cap || cap > CFG_MAX_BYTES) {
            break; /* the whole file, or more than the limit: parse says so */
        } else {
            size_t more = cap * 2 > CFG_MAX_BYTES + 1 ? CFG_MAX_BYTES + 1 : cap * 2;
            if ((grown = realloc(text, more)))
                text = grown, cap = more;
            else
                err = ENOMEM;
        }
    }
    fclose(f);
    int rc;
    if (err == ENOMEM)
        rc = npl__fail(err, "out of memory");
    else if (err)
        rc = npl__fail(err, "cannot read config file %s: %s", path, strerror(err));
    else
        rc = npl_config_parse(out, text, n, path);
    free(text);
    return rc;
}

int npl_config_set(npl_config *c, const char *section, const char *key, const char *value)
{
    if (!c || !section || !key || !value)
        return npl__fail(EINVAL, "NULL argument");
    if (strpbrk(value, "\n#") || strpbrk(key, " =[]#\n"))
        return npl__fail(EINVAL, "config values may not contain newlines or '#'");
    if (validate("set", 0, section, key, value) < 0)
        return -1;
    return put(c, section, key, value, 0);
}

int npl_config_format(const npl_config *c, char *buf, size_t size)
{
    if (!c)
        return npl__fail(EINVAL, "NULL config");
    static const char *order[] = {"machine", "threads", "policy", "factors"};
    size_t off = 0;
#define OUT(...)                                                                                 \
    do {                                                                                         \
        int k_ = snprintf(buf && off < size ? buf + off : NULL, buf && off < size ? size - off : 0, \
                          __VA_ARGS__);                                                          \
        off += (size_t)k_;                                                                       \
    } while (0)
    OUT("# numaplace platform config (format: docs/CONFIG.md)\n");
    for (size_t s = 0; s < NPL_ARRAY_LEN(order); s++) {
        int any = 0;
        for (int i = 0; i < c->n; i++)
            if (!strcmp(c->e[i].section, order[s])) {
                if (!any++)
                    OUT("\n[%s]\n", order[s]);
                OUT("%s = %s\n", c->e[i].key, c->e[i].value);
            }
    }
#undef OUT
    return (int)off;
}

int npl_config_list(const npl_config *c, const char *section, const char *key, int *out, int max)
{
    if (!c || !section || !key || max < 0 || (max > 0 && !out))
        return npl__fail(EINVAL, "npl_config_list: NULL argument or bad output buffer");
    const char *v = npl_config_get(c, section, key);
    if (!v)
        return 0;
    int *l = NULL, n = 0;
    if (npl__parse_list(v, NPL__MAX_ID, key, &l, &n) < 0)
        return -1;
    for (int i = 0; i < n && i < max; i++)
        out[i] = l[i];
    free(l);
    return n;
}

int npl_config_factors(const npl_config *c, int *nodes, double *latency, double *bandwidth,
                       int max)
{
    if (!c)
        return npl__fail(EINVAL, "NULL config");
    int *nn = NULL, n = 0;
    const char *v = npl_config_get(c, "factors", "nodes");
    if (!v)
        return 0;
    if (npl__parse_list(v, NPL__MAX_ID, "node", &nn, &n) < 0)
        return -1;
    if (n > max) {
        free(nn);
        return npl__fail(EOVERFLOW, "%d nodes in [factors], room for %d", n, max);
    }
    for (int i = 0; i < n; i++) {
        if (nodes)
            nodes[i] = nn[i];
        for (int w = 0; w < 2; w++) {
            double *m = w ? bandwidth : latency;
            if (!m)
                continue;
            char key[48];
            snprintf(key, sizeof key, "%s.%d", w ? "bandwidth_mbs" : "latency_ns", nn[i]);
            const struct entry *e = find(c, "factors", key);
            for (int j = 0; j < n; j++)
                m[i * n + j] = -1;
            if (e)
                parse_row(e->value, m + (size_t)i * n, n);
        }
    }
    free(nn);
    return n;
}

int npl_config_pin_for(const npl_config *c, const npl_policy *pol, char *strategy, size_t size)
{
    const struct entry *e = find(c, "threads", "pin");
    const char *v = e ? e->value : "auto";
    if (!strcmp(v, "none"))
        return 0;
    if (!strcmp(v, "auto")) {
        if (!pol || npl_policy_wants_pinning(pol) != 1)
            return 0;
        v = "compact";
    }
    if (strategy && size)
        snprintf(strategy, size, "%s", v);
    return 1;
}

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static npl_config *self_cfg;
static int self_errno;
static char self_msg[512];
static void load_self(void)
{
    if (npl_config_load(&self_cfg, NULL) < 0) {
        self_errno = errno;
        snprintf(self_msg, sizeof self_msg, "%s", npl_last_error());
        self_cfg = NULL;
    }
}

const npl_config *npl_config_self(void)
{
    pthread_once(&self_once, load_self);
    if (!self_cfg)
        npl__fail(self_errno ? self_errno : EINVAL, "%s", self_msg);
    return self_cfg;
}
