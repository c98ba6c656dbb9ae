/* SPDX-License-Identifier: BSD-3-Clause */
/* sites.c - allocation sites a human can read, and profiles that survive a rebuild (sites.h).
 * The program's object is read offline with libdwfl (elfutils): the line table names a heap
 * site's file:line, the symbol table its function (a static array's symbol is its own). Only the
 * command links libdw; the interposer records offsets, as before. Without libdw a site keeps its
 * object+offset and a rebuilt program's profile matches nothing. */
#define _GNU_SOURCE
#include "sites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NPL_HAVE_LIBDW
#include <elfutils/libdwfl.h>

static const Dwfl_Callbacks offline = {.find_debuginfo = dwfl_standard_find_debuginfo,
                                       .section_address = dwfl_offline_section_address};

/* the object at path, read offline; its load bias in *bias (ELF address + bias = module's) */
static Dwfl *open_object(const char *path, Dwfl_Module **mod, Dwarf_Addr *bias)
{
    Dwfl *d = dwfl_begin(&offline);
    if (!d)
        return NULL;
    *mod = dwfl_report_offline(d, "", path, -1);
    dwfl_report_end(d, NULL, NULL);
    if (!*mod || !dwfl_module_getelf(*mod, bias)) {
        dwfl_end(d);
        return NULL;
    }
    return d;
}

static const char *base_name(const char *f)
{
    const char *s = strrchr(f, '/');
    return s ? s + 1 : f;
}

/* the line-table row holding address a: its file (base name), line and start */
static int line_at(Dwfl_Module *m, Dwarf_Addr a, const char **file, int *line, Dwarf_Addr *start)
{
    Dwfl_Line *l = dwfl_module_getsrc(m, a);
    const char *f = l ? dwfl_lineinfo(l, start, line, NULL, NULL, NULL) : NULL;
    if (!f || *line <= 0)
        return -1;
    *file = base_name(f);
    return 0;
}

/* the function holding a, as the source names it: a compiler's clone suffix (make.constprop.0,
 * .isra.0, .part.0, .cold) left out, since another build may clone it otherwise; in fn */
static const char *function_at(Dwfl_Module *m, Dwarf_Addr a, char *fn, size_t size)
{
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(m, a, &off, &sym, NULL, NULL, NULL);
    if (!name || !*name)
        return NULL;
    snprintf(fn, size, "%.*s", (int)strcspn(name, "."), name);
    return *fn ? fn : NULL;
}

int sites_name(struct npl_profile *p)
{
    int named = 0;
    Dwfl *d = NULL;
    Dwfl_Module *m = NULL;
    Dwarf_Addr bias = 0;
    const char *open_path = NULL;
    for (uint32_t i = 0; i < p->narrays; i++) {
        struct npl_prof_site *s = &p->arrays[i].site;
        if (s->kind != NPL_SITE_HEAP || s->where || !s->object || !s->offset)
            continue;
        if (!open_path || strcmp(open_path, s->object)) {
            if (d)
                dwfl_end(d);
            open_path = s->object;
            d = open_object(s->object, &m, &bias);
        }
        if (!d)
            continue;
        Dwarf_Addr call = s->offset + bias - 1, start; /* inside the call instruction */
        char fnbuf[1024];
        const char *file, *fn = function_at(m, call, fnbuf, sizeof fnbuf);
        int line;
        if (fn && !s->symbol)
            s->symbol = strdup(fn);
        if (line_at(m, call, &file, &line, &start) == 0) {
            size_t n = strlen(file) + 24;
            if ((s->where = malloc(n))) {
                snprintf(s->where, n, "%s:%d", file, line);
                s->line_offset = s->offset + bias - start;
                s->has_line_offset = 1;
            }
        }
        named += fn || s->where;
    }
    if (d)
        dwfl_end(d);
    return named;
}

/* a static array's symbol in the new object: its ELF address, or 0 */
static uint64_t symbol_address(Dwfl_Module *m, Dwarf_Addr bias, const char *name)
{
    int n = dwfl_module_getsymtab(m);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *nm = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);
        if (nm && GELF_ST_TYPE(sym.st_info) == STT_OBJECT && !strcmp(nm, name))
            return addr - bias;
    }
    return 0;
}

/* whether the ELF address a follows a call instruction (x86-64: call rel32, call *rel32(%rip);
 * elsewhere not checked): the line's code may hold several starts that line_offset fits */
static int after_call(Dwfl_Module *m, uint64_t a)
{
#if defined(__x86_64__)
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(m, &bias);
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
            a < sh.sh_addr + 6 || a > sh.sh_addr + sh.sh_size)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || a - sh.sh_addr > data->d_size)
            return 0;
        const unsigned char *c = (const unsigned char *)data->d_buf + (a - sh.sh_addr);
        return c[-5] == 0xE8 || (c[-6] == 0xFF && c[-5] == 0x15);
    }
    return 0;
#else
    (void)m, (void)a;
    return 1;
#endif
}

/* a heap site in the new object: the code of its file:line in its function, line_offset bytes
 * past a start of that line's code; its new ELF offset, or 0 */
static uint64_t heap_address(Dwfl_Module *m, Dwarf_Addr bias, const struct npl_prof_site *s)
{
    const char *colon = strrchr(s->where, ':');
    if (!colon || !s->symbol || !s->has_line_offset)
        return 0;
    char file[4096];
    snprintf(file, sizeof file, "%.*s", (int)(colon - s->where), s->where);
    int line = atoi(colon + 1);
    Dwfl_Line **rows = NULL;
    size_t nrows = 0;
    if (dwfl_module_getsrc_file(m, file, line, 0, &rows, &nrows) < 0)
        return 0;
    uint64_t found = 0;
    for (size_t i = 0; i < nrows && !found; i++) {
        Dwarf_Addr start, at, a;
        int l2;
        const char *f2, *fn;
        char fnbuf[1024];
        if (!dwfl_lineinfo(rows[i], &start, NULL, NULL, NULL, NULL))
            continue;
        a = start + s->line_offset;
        if (line_at(m, a - 1, &f2, &l2, &at) == 0 && l2 == line && !strcmp(f2, base_name(file)) &&
            (fn = function_at(m, a - 1, fnbuf, sizeof fnbuf)) && !strcmp(fn, s->symbol) && a - at == s->line_offset &&
            after_call(m, a - bias))
            found = a - bias;
    }
    free(rows);
    return found;
}

int sites_rematch(struct npl_profile *p, const char *path, const char *build_id,
                  uint32_t *found, uint32_t *total, char *err, size_t errsz)
{
    Dwfl_Module *m;
    Dwarf_Addr bias;
    Dwfl *d = open_object(path, &m, &bias);
    *found = *total = 0;
    if (!d) {
        snprintf(err, errsz, "%s cannot be read (%s)", path, dwfl_errmsg(-1));
        return -1;
    }
    const char *old = p->program_build_id;
    for (uint32_t i = 0; i < p->narrays; i++) {
        struct npl_prof_site *s = &p->arrays[i].site;
        int mine = old ? s->build_id && !strcmp(s->build_id, old)
                       : s->object && p->program_path && !strcmp(s->object, p->program_path);
        if (!mine)
            continue; /* another object (a library): its own build-id still decides */
        (*total)++;
        uint64_t at = s->kind == NPL_SITE_STATIC ? (s->symbol ? symbol_address(m, bias, s->symbol) : 0)
                      : s->where ? heap_address(m, bias, s) : 0;
        char *bid = at ? strdup(build_id) : NULL;
        if (!bid)
            continue;
        free(s->build_id);
        s->build_id = bid;
        s->offset = at;
        (*found)++;
    }
    dwfl_end(d);
    char *nb = *found ? strdup(build_id) : NULL;
    if (nb) {
        free(p->program_build_id);
        p->program_build_id = nb;
    }
    return 0;
}
#else
int sites_name(struct npl_profile *p)
{
    (void)p;
    return 0;
}

int sites_rematch(struct npl_profile *p, const char *path, const char *build_id,
                  uint32_t *found, uint32_t *total, char *err, size_t errsz)
{
    (void)p, (void)path, (void)build_id;
    *found = *total = 0;
    snprintf(err, errsz, "this numaplace was built without libdw (elfutils): sites cannot be "
                         "found in a rebuilt program");
    return -1;
}
#endif
