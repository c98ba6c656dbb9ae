/* SPDX-License-Identifier: BSD-3-Clause */
/* format.h - the profile format v1's schema pieces shared by its reader (format.c) and writer
 * (format_write.c): an array's advice (format_advice.c). Internal to src/profile/. */
#ifndef NPL_PROFILE_FORMAT_H
#define NPL_PROFILE_FORMAT_H

#include "profile/json.h"

/* the "advice" member of an array; *has_chunk_nodes set when it holds chunk_nodes */
int npl__advice_read(struct npl__jr *r, struct npl_prof_advice *a, int *has_chunk_nodes);
void npl__advice_write(struct npl__jw *b, const struct npl_prof_advice *a,
                       const struct npl_profile *p);

#endif
