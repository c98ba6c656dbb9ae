/* SPDX-License-Identifier: BSD-3-Clause */
/* Policy strings: accepted forms, canonical round trip, and clear errors naming the bad part. */
#include "check.h"
#include <errno.h>
#include <numaplace.h>
#include <stdlib.h>

static void roundtrip(const char *in, const char *canonical)
{
    npl_policy *p;
    char buf[256];
    int rc = npl_policy_parse(&p, in);
    CHECK(rc == 0, "parse \"%s\": %s", in, npl_last_error());
    if (rc)
        return;
    npl_policy_format(p, buf, sizeof buf);
    CHECK(!strcmp(buf, canonical), "format(\"%s\") = \"%s\", want \"%s\"", in, buf, canonical);
    npl_policy *q;
    CHECK(npl_policy_parse(&q, buf) == 0, "canonical \"%s\" parses again", buf);
    char buf2[256];
    npl_policy_format(q, buf2, sizeof buf2);
    CHECK(!strcmp(buf, buf2), "round trip stable: %s vs %s", buf, buf2);
    npl_policy_free(q);
    npl_policy_free(p);
}

/* The message must explain what is wrong: what it says after echoing the input
 * ('policy "IN": '), so a word of the input alone is never enough. */
static void bad(const char *in, const char *must_mention)
{
    npl_policy *p = (npl_policy *)1;
    errno = 0;
    int rc = npl_policy_parse(&p, in);
    CHECK(rc == -1 && errno == EINVAL && p == NULL, "\"%s\" must be rejected (rc=%d)", in, rc);
    const char *msg = npl_last_error(), *why = msg;
    char echo[512];
    snprintf(echo, sizeof echo, "policy \"%s\": ", in);
    if (!strncmp(msg, echo, strlen(echo)))
        why = msg + strlen(echo);
    CHECK(strstr(why, must_mention) != NULL && strstr(in, must_mention) == NULL,
          "error for \"%s\" says \"%s\" (text that is no part of the input) after the echoed "
          "input: %s", in, must_mention, msg);
}

int main(void)
{
    roundtrip("cyclic", "cyclic");
    roundtrip("interleave", "cyclic");
    roundtrip("cyclic_block:16", "cyclic_block:pages=16");
    roundtrip("cyclic_block:rows=4", "cyclic_block:units=4");
    roundtrip("bind_all:0,2", "bind_all:0,2");
    roundtrip("bind_all:0-3", "bind_all:0-3");
    roundtrip("bind_block", "bind_block");
    roundtrip("bind_block:threads=8,pin=scatter", "bind_block:threads=8,pin=scatter");
    roundtrip("skew_mapp", "skew_mapp");
    roundtrip("prime_mapp:7", "prime_mapp:7");
    roundtrip("prime_mapp:p=11", "prime_mapp:11");
    roundtrip("random:seed=42", "random:seed=42");
    roundtrip("random", "random:seed=1");
    roundtrip("random_block:8,seed=3", "random_block:pages=8,seed=3");
    roundtrip("weighted:0=3,1=1", "weighted:0=3,1=1");
    roundtrip("cyclic@0-3,6", "cyclic@0-3,6");
    roundtrip("first_touch", "first_touch");

    bad("", "empty");
    bad("cyclik", "unknown policy \"cyclik\" (known:");
    bad("cyclic:5", "unexpected parameter \"5\"");
    bad("cyclic_block:0", "bad value \"0\" for pages");
    bad("cyclic_block:-1", "bad value \"-1\" for pages");
    bad("cyclic_block:x", "bad value \"x\" for pages");
    bad("cyclic_block:", "empty");
    bad("prime_mapp:4", "not prime");
    bad("prime_mapp:abc", "prime \"abc\" is not a number");
    bad("bind_all:0,0", "duplicate");
    bad("bind_all:a", "malformed node list \"a\"");
    bad("bind_all:-1", "malformed node list \"-1\"");
    bad("bind_all:2@0-1", "outside the subset");
    bad("weighted", "NODE=WEIGHT");
    bad("weighted:0=0", "weight 0 of node 0 must be 1..");
    bad("weighted:0", "NODE=WEIGHT");
    bad("weighted:0=3,0=1", "duplicate");
    bad("random:seed=-4", "bad value \"-4\" for seed");
    bad("random:speed=4", "unknown parameter \"speed\"");
    bad("skew_mapp@", "empty");
    bad("cyclic@1,1", "duplicate");
    /* repeated huge ranges are refused before they are expanded (no gigabyte of ints) */
    bad("cyclic@0-4194305", "out of range");
    bad("cyclic@0-60000,0-60000,0-60000,0-60000,0-60000,0-60000", "some twice");
    bad("cyclic@5-2886864", "out of range (max 65535)"); /* a fuzz timeout: ids beyond any machine */
    bad("cyclic@99999999999", "malformed node list \"99999999999\"");
    bad("bind_block:pin=diagonal", "bad value \"diagonal\" for pin");
    bad("bind_block:threads=0", "bad value \"0\" for threads");

    /* C constructors */
    npl_policy *p;
    int nodes[] = {1, 3};
    CHECK(npl_policy_create(&p, NPL_CYCLIC, nodes, 2) == 0, "create cyclic@1,3");
    char buf[64];
    npl_policy_format(p, buf, sizeof buf);
    CHECK(!strcmp(buf, "cyclic@1,3"), "create -> %s", buf);
    CHECK(npl_policy_set_seed(p, 3) == -1 && errno == EINVAL, "seed on cyclic rejected");
    CHECK(npl_policy_wants_pinning(p) == 0, "cyclic does not ask for pinning (MAi default)");
    npl_policy_free(p);
    CHECK(npl_policy_create(&p, NPL_BIND_BLOCK, NULL, 0) == 0, "create bind_block");
    CHECK(npl_policy_wants_pinning(p) == 1, "bind_block asks for pinning");
    CHECK(npl_policy_set_threads(p, 4, "scatter") == 0 && npl_policy_set_block_units(p, 2) == 0,
          "set threads/units");
    npl_policy_format(p, buf, sizeof buf);
    CHECK(!strcmp(buf, "bind_block:units=2,threads=4,pin=scatter"), "format %s", buf);
    npl_policy_free(p);
    int dup[] = {2, 2};
    CHECK(npl_policy_create(&p, NPL_CYCLIC, dup, 2) == -1 && errno == EINVAL, "duplicate nodes");
    CHECK(npl_policy_create(&p, (npl_policy_kind)99, NULL, 0) == -1 && errno == EINVAL,
          "bad kind");
    CHECK(npl_policy_create(&p, NPL_WEIGHTED, NULL, 0) == 0 &&
              npl_policy_set_weights(p, nodes, (int[]){3, 0}, 2) == -1 && errno == EINVAL,
          "zero weight rejected");
    npl_policy_free(p);
    return check_summary("test_parse");
}
