/* SPDX-License-Identifier: BSD-3-Clause */
/* site.c - where an array comes from, the same on every run: the ELF object (path and GNU
 * build-id) and an offset in it, never an address (docs/PROFILE.md §2).
 *
 *  - Heap blocks: the allocator's return address. When it lies in the C, C++ or Fortran runtime
 *    (operator new in libstdc++, strdup in libc, an intrinsic's temporary in libgfortran, the
 *    dynamic loader), the calling stack is unwound (glibc's backtrace(): .eh_frame, no frame
 *    pointers needed) and the first frame outside those objects is the site. The offset is the
 *    return address minus the object's load bias, i.e. the address in the object's own ELF
 *    numbering (what addr2line takes; the call is the instruction before it).
 *  - The k-th tracked allocation made at one site has ordinal k (0 first), counted per process
 *    for the allocations large enough to be tracked.
 *  - numaplace's own blocks (npl__site_attribute): what libnumaplace.so allocates for itself,
 *    directly or through a C runtime function (a config file's buffer, a page list, hwloc's
 *    topology when it loads one), is no array of the program: it has no site. One unwind
 *    answers both questions (own? which site?) for the interposer. The blocks an OpenMP
 *    runtime allocates for npl_omp_alloc are the program's.
 *  - Static arrays: the object's writable segments split by its symbol table (.symtab when the
 *    file has one, else .dynsym): every OBJECT symbol of at least the threshold inside a
 *    writable PT_LOAD (RELRO excluded). A file without usable symbols gives one array per
 *    segment, named after it ("[.bss]" style names are not invented: "[segment N]").
 *
 * Loaded objects are found with dl_iterate_phdr and cached in a fixed table (no malloc: this
 * runs inside malloc); the table is rebuilt when objects were loaded or unloaded since. */
#define _GNU_SOURCE
#include "profile/profile.h"

#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OBJECTS 512

static struct npl_site_object objects[MAX_OBJECTS];
static int nobjects;
static unsigned long long seen_adds, seen_subs;
static int table_lock;
static char exe_path[NPL_SITE_PATH];

static void lock(void)
{
    while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}
static void unlock(void) { __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE); }

static int base_has_prefix(const char *path, const char *const *prefixes, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

/* the sanitizers' runtimes: their interceptors are the program's malloc when they are loaded,
 * and their blocks and statics are their own (their internal threads touch them) */
static int is_tool(const char *path)
{
    static const char *const prefixes[] = {"libasan.so", "libtsan.so", "libubsan.so", "liblsan.so",
                                           "libhwasan.so"};
    return base_has_prefix(path, prefixes, NPL_ARRAY_LEN(prefixes));
}

/* C, C++, Fortran and OpenMP runtimes, hwloc, numaplace itself (omp_alloc's caller), malloc
 * replacements and the sanitizers: an allocation made inside them belongs to their caller, and
 * their static data is not the program's */
static int is_runtime(const char *path)
{
    static const char *const prefixes[] = {
        "libc.so",      "libstdc++.so",  "libgcc_s.so",    "libc++.so",  "libc++abi.so",
        "libgfortran.so", "ld-linux",    "libgomp.so",     "libomp.so",  "libiomp5.so",
        "libhwloc.so",  "libnumaplace_preload.so", "libnumaplace.so", "libjemalloc.so",
        "libtcmalloc",  "libmimalloc.so", "libtbbmalloc.so", "libmemkind.so"};
    return is_tool(path) || base_has_prefix(path, prefixes, NPL_ARRAY_LEN(prefixes));
}

int npl__site_runtime_path(const char *path)
{
    return path && is_runtime(path);
}

static int is_openmp(const char *path)
{
    static const char *const prefixes[] = {"libgomp.so", "libomp.so", "libiomp5.so"};
    return base_has_prefix(path, prefixes, NPL_ARRAY_LEN(prefixes));
}

static int is_own(const char *path)
{
    static const char *const prefixes[] = {"libnumaplace.so"};
    return base_has_prefix(path, prefixes, NPL_ARRAY_LEN(prefixes));
}

static void hex(const unsigned char *p, size_t n, char *out, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < n && k + 2 < size; i++) {
        out[k++] = digits[p[i] >> 4];
        out[k++] = digits[p[i] & 15];
    }
    out[k] = 0;
}

/* the GNU build-id of a loaded object, from its PT_NOTE segments (mapped: readable) */
static void build_id_of(const struct dl_phdr_info *info, char *out, size_t size)
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
            const char *n = p + sizeof *nh, *d = n + name;
            if (d + desc > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(n, "GNU", 4) &&
                nh->n_descsz > 0 && nh->n_descsz <= 64) {
                hex((const unsigned char *)d, nh->n_descsz, out, size);
                return;
            }
            p = d + desc;
        }
    }
}

const char *npl__site_exe_path(void)
{
    if (!exe_path[0]) {
        char buf[NPL_SITE_PATH];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = 0;
            memcpy(exe_path, buf, (size_t)n + 1);
        }
    }
    return exe_path;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        seen_adds = info->dlpi_adds;
        seen_subs = info->dlpi_subs;
    }
    if (nobjects >= MAX_OBJECTS)
        return 1;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;
    struct npl_site_object *o = &objects[nobjects];
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (!name && nobjects == 0)
        name = npl__site_exe_path(); /* the first object is the program */
    if (!name)
        return 0; /* the vdso under some loaders: nothing is allocated from it */
    snprintf(o->path, sizeof o->path, "%s", name);
    o->bias = info->dlpi_addr;
    o->lo = lo;
    o->hi = hi;
    o->runtime = is_runtime(o->path);
    o->openmp = is_openmp(o->path);
    o->own = is_own(o->path);
    o->tool = is_tool(o->path);
    o->main = nobjects == 0;
    build_id_of(info, o->build_id, sizeof o->build_id);
    nobjects++;
    return 0;
}

static int count_changes(struct dl_phdr_info *info, size_t size, void *data)
{
    int *changed = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *changed = info->dlpi_adds != seen_adds || info->dlpi_subs != seen_subs;
    else
        *changed = 1;
    return 1;
}

static void refresh(void)
{
    nobjects = 0;
    dl_iterate_phdr(add_object, NULL);
}

static int find(uintptr_t a)
{
    for (int i = 0; i < nobjects; i++)
        if (a >= objects[i].lo && a < objects[i].hi)
            return i;
    return -1;
}

int npl__site_object(const void *addr, struct npl_site_object *out)
{
    uintptr_t a = (uintptr_t)addr;
    lock();
    int changed = 0;
    if (!nobjects)
        refresh();
    else if (dl_iterate_phdr(count_changes, &changed), changed)
        refresh();
    int i = find(a);
    if (i >= 0 && out)
        *out = objects[i];
    unlock();
    return i >= 0 ? 0 : -1;
}

int npl__site_main_object(struct npl_site_object *out)
{
    lock();
    if (!nobjects)
        refresh();
    int ok = nobjects > 0 && objects[0].main;
    if (ok)
        *out = objects[0];
    unlock();
    return ok ? 0 : -1;
}

/* One unwind for a block whose allocator returns to ra. *site: the allocation's call site (ra,
 * or when ra lies in a runtime object, the first frame of the stack outside them). With
 * want_own: 1 when the block is numaplace's own (ra in libnumaplace.so, or in a C runtime, hwloc
 * or the interposer called from it, before any other frame; an OpenMP runtime's block is its
 * caller's: npl_omp_alloc's, the program's) or a sanitizer runtime's (ra in it: TSan's own
 * tables, protected by the sampler, ended the program). Unwinds only when ra is in a runtime. */
static int walk(const void *ra, int want_own, const void **site)
{
    struct npl_site_object o;
    *site = ra;
    if (npl__site_object(ra, &o) < 0 || !o.runtime)
        return 0;
    if (want_own && (o.own || o.tool)) /* (a sanitizer's call: its own block; a frame of its
                                         * interceptors further out is walked through) */
        return 1;
    int may_be_own = want_own && !o.openmp;
    void *frames[32];
    int n = backtrace(frames, (int)NPL_ARRAY_LEN(frames)), i = 0;
    while (i < n && frames[i] != ra)
        i++;
    for (i++; i < n; i++) {
        if (npl__site_object(frames[i], &o) < 0) {
            may_be_own = 0;
            continue;
        }
        if (!o.runtime) {
            *site = frames[i];
            return 0;
        }
        if (may_be_own && o.own)
            return 1;
        may_be_own = may_be_own && !o.openmp;
    }
    return 0; /* only runtime frames (a runtime's own allocation): its own site */
}

const void *npl__site_caller(const void *ra)
{
    const void *site;
    walk(ra, 0, &site);
    return site;
}

int npl__site_attribute(const void *ra, const void **site)
{
    return walk(ra, 1, site);
}

void npl__site_warm(void)
{
    void *frames[4];
    backtrace(frames, 4); /* loads libgcc_s now, not inside the first large malloc */
    npl__site_object((const void *)npl__site_warm, NULL);
}

int npl__site_resolve(const void *ra, struct npl_site_key *key, struct npl_site_object *obj)
{
    struct npl_site_object o;
    if (npl__site_object(ra, &o) < 0)
        return -1;
    if (obj)
        *obj = o;
    key->offset = (uint64_t)((uintptr_t)ra - o.bias);
    key->object_hash = npl__site_hash_object(o.path, o.build_id);
    return 0;
}

uint64_t npl__site_hash_object(const char *path, const char *build_id)
{
    /* FNV-1a of the build-id when there is one (a copied or moved binary is the same), else of
     * the path */
    const char *s = build_id && *build_id ? build_id : path;
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h ? h : 1;
}

/* ---- ordinals: the k-th tracked allocation at a site (open addressing, lock-free) ---- */
#define ORD_SLOTS 8192
static struct { _Atomic uint64_t h; _Atomic uint64_t off; _Atomic uint32_t count; } ords[ORD_SLOTS];

uint32_t npl__site_next_ordinal(const struct npl_site_key *k)
{
    uint64_t h = k->object_hash ^ (k->offset * 0x9E3779B97F4A7C15ull);
    if (!h)
        h = 1;
    for (size_t i = (size_t)(h % ORD_SLOTS), probes = 0; probes < ORD_SLOTS;
         i = (i + 1) % ORD_SLOTS, probes++) {
        uint64_t cur = atomic_load(&ords[i].h);
        if (cur == 0) {
            uint64_t expect = 0;
            if (atomic_compare_exchange_strong(&ords[i].h, &expect, h)) {
                atomic_store(&ords[i].off, k->offset + 1);
                return atomic_fetch_add(&ords[i].count, 1);
            }
            cur = expect;
        }
        if (cur == h) {
            while (atomic_load(&ords[i].off) == 0) /* its owner is still writing it */
                sched_yield();
            if (atomic_load(&ords[i].off) == k->offset + 1)
                return atomic_fetch_add(&ords[i].count, 1);
        }
    }
    return UINT32_MAX; /* table full: no ordinal */
}

void npl__site_reset_ordinals(void) { memset((void *)ords, 0, sizeof ords); }

/* ---- static arrays: the symbols of a file's writable segments ---- */
struct elf_file {
    const unsigned char *map;
    size_t size;
};

static int open_elf(const char *path, struct elf_file *f)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
        close(fd);
        return -1;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    f->map = m;
    f->size = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > f->size ||
        (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > f->size - eh->e_shoff) {
        munmap(m, f->size);
        return -1;
    }
    return 0;
}

struct static_scan {
    uintptr_t want_lo; /* the object to scan: its load bias range contains this address */
    const char *path;
    uintptr_t bias;
    int found;
    struct { uintptr_t lo, hi; } seg[8];
    int nseg;
    uintptr_t relro_lo, relro_hi;
};

static int writable_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct static_scan *s = data;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    int is_main = !s->found && !name && s->path == NULL;
    if (!is_main && (!name || !s->path || strcmp(name, s->path)))
        return 0;
    s->found = 1;
    s->bias = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            s->relro_lo = info->dlpi_addr + ph->p_vaddr;
            s->relro_hi = s->relro_lo + ph->p_memsz;
        }
    }
    for (int i = 0; i < info->dlpi_phnum && s->nseg < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        s->seg[s->nseg].lo = info->dlpi_addr + ph->p_vaddr;
        s->seg[s->nseg].hi = s->seg[s->nseg].lo + ph->p_memsz;
        s->nseg++;
    }
    return 1;
}

static int in_writable(const struct static_scan *s, uintptr_t lo, uintptr_t hi)
{
    if (lo < s->relro_hi && hi > s->relro_lo)
        return 0;
    for (int i = 0; i < s->nseg; i++)
        if (lo >= s->seg[i].lo && hi <= s->seg[i].hi)
            return 1;
    return 0;
}

/* the symbols of table sec (SHT_SYMTAB or SHT_DYNSYM) that qualify; returns how many */
static int scan_symbols(const struct elf_file *f, const ElfW(Shdr) *sh, int nsh, int sec,
                        const struct static_scan *s, size_t threshold, npl_static_cb cb, void *ctx)
{
    const ElfW(Shdr) *st = &sh[sec];
    if (st->sh_link >= (unsigned)nsh || st->sh_entsize != sizeof(ElfW(Sym)) ||
        st->sh_offset > f->size || st->sh_size > f->size - st->sh_offset)
        return 0;
    const ElfW(Shdr) *strs = &sh[st->sh_link];
    if (strs->sh_offset > f->size || strs->sh_size > f->size - strs->sh_offset)
        return 0;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)(f->map + st->sh_offset);
    const char *names = (const char *)f->map + strs->sh_offset;
    size_t n = st->sh_size / sizeof *sym;
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        if (ELF64_ST_TYPE(sym[i].st_info) != STT_OBJECT || sym[i].st_size < threshold ||
            sym[i].st_shndx == SHN_UNDEF || sym[i].st_shndx >= SHN_LORESERVE ||
            sym[i].st_name >= strs->sh_size)
            continue;
        uintptr_t lo = s->bias + sym[i].st_value, hi = lo + sym[i].st_size;
        if (hi < lo || !in_writable(s, lo, hi))
            continue;
        const char *name = names + sym[i].st_name;
        if (!memchr(name, 0, strs->sh_size - sym[i].st_name))
            continue;
        /* the same object may be listed twice (a global in .symtab with a local alias) */
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = sym[j].st_value == sym[i].st_value &&
                  ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT && sym[j].st_size >= threshold &&
                  sym[j].st_shndx == sym[i].st_shndx;
        if (dup)
            continue;
        cb(name, (uint64_t)sym[i].st_value, lo, (size_t)sym[i].st_size, ctx);
        count++;
    }
    return count;
}

int npl__site_statics(const char *path, size_t threshold, npl_static_cb cb, void *ctx)
{
    struct static_scan s;
    memset(&s, 0, sizeof s);
    s.path = path;
    dl_iterate_phdr(writable_segments, &s);
    if (!s.found || !s.nseg)
        return 0;
    const char *file = path ? path : npl__site_exe_path();
    struct elf_file f;
    int count = 0, have_symbols = 0;
    if (file && *file && open_elf(file, &f) == 0) {
        const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)f.map;
        const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(f.map + eh->e_shoff);
        int symtab = -1, dynsym = -1;
        for (int i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type == SHT_SYMTAB)
                symtab = i;
            else if (sh[i].sh_type == SHT_DYNSYM)
                dynsym = i;
        }
        int sec = symtab >= 0 ? symtab : dynsym;
        if (sec >= 0) {
            have_symbols = 1;
            count = scan_symbols(&f, sh, eh->e_shnum, sec, &s, threshold, cb, ctx);
        }
        munmap((void *)f.map, f.size);
    }
    if (!have_symbols) /* stripped of both tables: one array per writable segment */
        for (int i = 0; i < s.nseg; i++) {
            uintptr_t lo = s.seg[i].lo, hi = s.seg[i].hi;
            if (lo < s.relro_hi && s.relro_hi < hi)
                lo = s.relro_hi;
            if (hi - lo < threshold)
                continue;
            char name[32];
            snprintf(name, sizeof name, "[segment %d]", i);
            cb(name, (uint64_t)(lo - s.bias), lo, (size_t)(hi - lo), ctx);
            count++;
        }
    return count;
}

/* ---- a file's build-id, read from its program headers (not loaded) ---- */
int npl__elf_build_id(const char *path, char *out, size_t size)
{
    struct elf_file f;
    out[0] = 0;
    if (open_elf(path, &f) < 0)
        return -1;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)f.map;
    int rc = -1;
    if (eh->e_phentsize == sizeof(ElfW(Phdr)) && eh->e_phoff <= f.size &&
        (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) <= f.size - eh->e_phoff) {
        const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(f.map + eh->e_phoff);
        for (int i = 0; i < eh->e_phnum && rc < 0; i++) {
            if (ph[i].p_type != PT_NOTE || ph[i].p_offset > f.size ||
                ph[i].p_filesz > f.size - ph[i].p_offset)
                continue;
            const unsigned char *p = f.map + ph[i].p_offset, *end = p + ph[i].p_filesz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
                const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
                size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
                const unsigned char *n = p + sizeof *nh, *d = n + name;
                if (name > (size_t)(end - n) || desc > (size_t)(end - d))
                    break;
                if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(n, "GNU", 4) &&
                    nh->n_descsz > 0 && nh->n_descsz <= 64) {
                    hex(d, nh->n_descsz, out, size);
                    rc = 0;
                    break;
                }
                p = d + desc;
            }
        }
    }
    munmap((void *)f.map, f.size);
    return rc;
}
