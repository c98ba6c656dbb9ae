/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_fault.c - the fault sampling backend, a row of backends.c's table: the program samples
 * itself, by protection faults (sampler.c, run in the interposer): nothing to start in the
 * command, and it can sample on every machine. */
#include "profile/profile.h"

#include <stdio.h>

static int fault_probe(char *what, size_t wsize, char *why, size_t size)
{
    (void)why;
    (void)size;
    snprintf(what, wsize, "protection faults");
    return 0;
}

const struct npl__sampling_backend npl__backend_fault = {
    .name = "fault",
    .id = NPL_BACKEND_FAULT,
    .probe = fault_probe,
};
