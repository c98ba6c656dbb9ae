/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file /mai.h
 * @brief mai.h - MAi's header name: includes numaplace/mai.h (the MAi-compatible API). */
#ifndef MAI_H_NUMAPLACE
#define MAI_H_NUMAPLACE
#include <numaplace/mai.h>
#endif
