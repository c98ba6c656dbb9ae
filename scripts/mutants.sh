#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Mutation check: small mutations of the product, applied one at a time to a copy of the tree
# (/tmp/npl-mutants/NAME-OF-THIS-TREE, built in its build/ with ccache: CCACHE_BASEDIR is
# /tmp/npl-mutants, so the compiler cache of a tree at the same depth serves), each followed by the fast
# tests that should kill it. Prints, per mutant, "killed by TEST", "SURVIVED", "stale" (its
# pattern no longer matches the file: the code moved; update the list) or "BROKEN" (it does not
# compile), then a summary line.
# Accepted survivors and why: tests/README.md ("Mutants").
#   bash scripts/mutants.sh [NAME...]      (default: every mutant of the list)
# env: NPL_MUTANTS_DIR (default /tmp/npl-mutants). Exit status: the number of survivors that are
# not accepted (0: every unaccepted mutant is killed and none is stale).
set -u
cd "$(dirname "$0")/.."
SRC=$PWD
DIR=${NPL_MUTANTS_DIR:-/tmp/npl-mutants}
export CCACHE_BASEDIR=$DIR CCACHE_NOHASHDIR=1
COPY=$DIR/$(basename "$SRC")

# NAME ~ FILE ~ sed expression (must change the file) ~ ctest regex ~ targets ~ accepted (why)
MUTANTS=(
"ordinal-apply~preload/apply.c~s/if (e->a->site.ordinal == ordinal)/if (e->a->site.ordinal == 0)/~host.profile_apply$~numaplace_cli numaplace_preload test_profile_apply~"
"next-ordinal-apply~preload/apply.c~s/struct entry \*e = lookup(k->object_hash, k->offset, \*ord, NPL_SITE_HEAP)/struct entry *e = lookup(k->object_hash, k->offset, *ord + 1, NPL_SITE_HEAP)/~host.profile_apply$~numaplace_cli numaplace_preload test_profile_apply~"
"ordinal-collect~src/profile/collect.c~s/if (a->site.ordinal == ordinal)/if (a->site.ordinal == 0)/~host.auto$~numaplace_cli numaplace_preload test_auto~"
"lazy-no-mbind~src/place/place_lazy.c~s/if (npl__mbind(cnt, addr + first \* psz/if (0 \&\& npl__mbind(cnt, addr + first * psz/~host.profile_apply$~numaplace_cli numaplace_preload test_profile_apply~"
"lazy-no-interleave~src/place/place_lazy.c~s/if (npl__mbind(cnt, addr, npages \* psz, MPOL_INTERLEAVE/if (0 \&\& npl__mbind(cnt, addr, npages * psz, MPOL_INTERLEAVE/~host.place$~numaplace_cli numaplace_preload test_place~accepted: MPOL_INTERLEAVE needs two nodes (guest_profile, guest_placement)"
"sampler-all-local~src/profile/sampler.c~s/where = (unsigned)st == node ? NPL_RAW_LOCAL : NPL_RAW_REMOTE;/where = NPL_RAW_LOCAL;/~host.sampler$|cli.profile$~numaplace_cli numaplace_preload test_sampler~accepted: one node, every access is local (guest_profile_locality: 0% local under bind_all:1)"
"sampler-chunk~src/profile/sampler.c~s/struct sampled one = record(s->array, chunk, write);/struct sampled one = record(s->array, chunk >> 1, write);/~host.sampler$~test_sampler~"
"sampler-no-write~src/profile/sampler.c~s/struct sampled one = record(s->array, chunk, write);/struct sampled one = record(s->array, chunk, 0);/~host.sampler$~test_sampler~"
"loo-unit-access~src/profile/classify_candidates.c~s/left_out_share(L, j, v1, n1, v2, n2, sample_weight(w, s))/left_out_share(L, j, v1, n1, v2, n2, 1.0)/~unit.test_classify$~test_classify~"
"no-window-folds~src/profile/classify_candidates.c~s/int folds = set_windows(w, set, win);/int folds = 0 \&\& set_windows(w, set, win);/~unit.test_classify$~test_classify~"
"stretch-prediction~src/profile/classify.c~s/    narrower [&]= w->windows_only;/    narrower = 0;/~unit.test_classify$~test_classify~"
"own-blocks-tracked~preload/alloc.c~s/    int own = npl__site_attribute(ra, site);/    int own = (*site = npl__site_caller(ra), 0);/~cli.profile_own$~numaplace_cli numaplace_preload own_blocks~"
"site-not-handed~preload/alloc.c~s/    void \*p = placer(n, align, site);/    void *p = placer(n, align, ra);/~cli.omp_alloc$~numaplace_cli numaplace_preload omp_alloc_gcc~"
"foreign-not-profiled~preload/alloc.c~s/    adopt_profiled = profiling || applying;/    adopt_profiled = 0;/~cli.profile_foreign$|host.profile_apply_jemalloc$~numaplace_cli numaplace_preload align_styles_jemalloc cxx_align_jemalloc align_styles_tcmalloc cxx_align_tcmalloc align_styles_mimalloc cxx_align_mimalloc test_profile_apply_jemalloc~"
"untrack-keeps-first-touch~src/profile/sampler.c~s/give_back_array(a); \/\* its units still/if (0) give_back_array(a); \/* its units still/~cli.profile_foreign$~numaplace_cli numaplace_preload align_styles_jemalloc cxx_align_jemalloc align_styles_tcmalloc cxx_align_tcmalloc align_styles_mimalloc cxx_align_mimalloc~"
"delete-not-released~preload/alloc.c~s/            adopted_release(p);  /            (void)p;  /~cli.profile_foreign$~numaplace_cli numaplace_preload align_styles_jemalloc cxx_align_jemalloc align_styles_tcmalloc cxx_align_tcmalloc align_styles_mimalloc cxx_align_mimalloc~"
"runtime-statics-profiled~preload/profile.c~s/    if (name \&\& (npl__site_runtime_path(name) || /    if (name \&\& (0 || /~contract.calls$~numaplace_cli numaplace_preload contract_calls_tsan contract_calls_asan~"
"part-size-ignored~src/defaults/omp_alloc.c~s/part == NPL_OMP_INTERLEAVED \&\& part_size > ps/0/~cli.omp_alloc$~numaplace numaplace_cli numaplace_preload omp_alloc_lib omp_alloc_gcc omp_alloc_clang omp_alloc_f~accepted: one node puts every part on node 0; guest_omp_alloc (4 nodes) fails on it"
"folds-by-window~src/profile/classify_candidates.c~s/int f = __builtin_parity(dealt_n++);/int f = __builtin_parity((unsigned)p); (void)dealt_n;/~cli.advise$~numaplace_cli~"
"alone-recurring~src/profile/classify_phases.c~s/return in->phases \&\& in->phases\[p\].entries >= 2 \&\& in->phases\[p\].kind != NPL_PHASE_WINDOW;/return in->phases \&\& in->phases[p].entries >= 2;/~cli.advise$~numaplace_cli~"
"unsampled-reader-ignored~src/profile/classify_candidates.c~s/        running_alongside(w, sampled, nsampled, ex, on);/        (void)running_alongside;/~unit.test_classify$~test_classify~"
"phase-exposure-ignored~src/profile/classify.c~s/    if (in->phase_exposure \&\& in->nphase_exposure \&\& in->nphases) {/    if (0) {/~cli.advise$|unit.test_classify$~numaplace_cli test_classify~"
"ordered-cycles-off~src/profile/classify_candidates.c~s/        if (!distinct || ascending) \/\* no cycle/        if (1) \/\* no cycle/~unit.test_classify$~test_classify~"
"masked-readers-off~src/profile/classify_cost.c~s/        if (t != t0 \&\& e >= e0 \/ 2 \&\& a > 0/        if (0 \&\& t != t0 \&\& e >= e0 \/ 2 \&\& a > 0/~unit.test_classify$~test_classify~"
"phase-exposure-unread~src/profile/format.c~s/                p->phase_exposure = v;/                free(v), p->nphase_exposure = 0;/~unit.test_profile_format$~test_profile_format~"
"first-round-uncounted~src/profile/raw.c~s/clock_tid\[i\] == tid ? clock_ns\[i\] : had_round ? 0 : c;/clock_tid[i] == tid ? clock_ns[i] : c;/~unit.test_perf_decode$~test_perf_decode~"
"unseen-threads-ignored~src/profile/classify_candidates.c~s/        if (!sampled\[t\] \&\& ex\[t\] >= top \/ 2 \&\& seen\[t\] <= 0) {/        if (0) {/~unit.test_classify$~test_classify~"
"unseen-nodes-not-readers~src/profile/classify_cost.c~s/    if (w->unseen_nodes \&\& v->nacc >= 2)/    if (0 \&\& w->unseen_nodes)/~unit.test_classify$|cli.advise$~test_classify numaplace_cli~"
"unsampled-threads-dropped~src/profile/collect.c~s/            nthreads = t + 1;/            (void)t;/~unit.test_perf_decode$~test_perf_decode~"
"thread-cpu-unnoted~src/profile/raw.c~s/            note_cpu(r, tid, t);/            (void)tid;/~unit.test_perf_decode$~test_perf_decode~"
"spread-prediction-off~src/profile/classify.c~s/    if (npl__cls_spread_prediction(w, v, c, spread) < 0)/    if (0 \&\& npl__cls_spread_prediction(w, v, c, spread) < 0)/~unit.test_classify$~test_classify~"
"spread-prediction-always~src/profile/classify.c~s/double tol = n > 0 ? 2 \* wilson_half(c->frac, n) : 1;/double tol = 1;/~unit.test_classify$~test_classify~"
"regions-unseen-ignored~src/profile/classify_candidates.c~s/    if (!(w->windows_only || in->idle_sleep) || !in->phase_tally/    if (!w->windows_only || !in->phase_tally/~unit.test_classify$~test_classify~"
"regions-masked-ignored~src/profile/classify_cost.c~s/(in->phases\[ph\].kind == NPL_PHASE_WINDOW || in->idle_sleep)/(in->phases[ph].kind == NPL_PHASE_WINDOW)/~unit.test_classify$~test_classify~"
"regions-always-asleep~src/profile/classify_candidates.c~s/    if (!(w->windows_only || in->idle_sleep) || !in->phase_tally/    if (!in->phase_tally/~unit.test_classify$~test_classify~"
"omp-wait-uncollected~src/profile/collect.c~s/    p->idle_sleep = in->idle_sleep;/    (void)in;/~unit.test_perf_decode$~test_perf_decode~"
"even-split-edge-off~src/profile/classify_rules.c~s/    if (t1 > t0 \&\& (double)t1 \* B \/ T >= hi)/    if (0)/~unit.test_classify$~test_classify~"
"owners-change-once-off~src/profile/classify_phases.c~s/    int changed = owners_changed_once(w, v);/    int changed = 0;/~unit.test_classify$~test_classify~"
"part-share-err-off~src/profile/classify.c~s/        out->local_err = dmin(1, out->local_err + err);/        (void)err;/~unit.test_classify$~test_classify~"
"owners-changed-filled-from-rest~src/profile/classify.c~s/    if (v->recurring || !narrower || v->owners_changed)/    if (v->recurring || !narrower)/~cli.advise$~numaplace_cli~"
"turns-unweighed~src/profile/classify.c~s/    if (tally \&\& ntally \&\& npl__profile_took_turns(p) \&\&/    if (0 \&\& tally \&\& ntally \&\&/~cli.advise$~numaplace_cli~"
"rounds-unweighed~src/profile/classify.c~s/    int paced = window_rounds(w, v, wt, 0.5);/    int paced = 0;/~unit.test_classify$~test_classify~"
"unsampled-rounds-lost~src/profile/classify.c~s/        grounds += (double)ph\[p\].barriers;/        grounds = gacc > 0 ? grounds + (double)ph[p].barriers : 0;/~unit.test_classify$~test_classify~"
"leading-rounds-kept~src/profile/classify.c~s/            grounds = gsecs = 0;/            grounds = last_from >= 0 ? 0 : grounds, gsecs = last_from >= 0 ? 0 : gsecs;/~unit.test_classify$~test_classify~"
"split-rounds-forward~src/profile/classify.c~s/    int paced = window_rounds(w, v, wt, 0.5);/    int paced = window_rounds(w, v, wt, 0);/~unit.test_classify$~test_classify~"
"split-err-off~src/profile/classify.c~s/        split = dmax(split, g > f ? g - f : f - g);/        (void)g;/~unit.test_classify$~test_classify~"
"read-across-ignored~src/profile/classify_internal.h~s/ \&\& v->read_across < 2;/;/~unit.test_classify$|cli.advise$~test_classify numaplace_cli~"
"read-across-any-backend~src/profile/classify_cost.c~s/    if (!in->fault_samples || !in->rw_known/    if (!in->rw_known/~unit.test_classify$|cli.advise$~test_classify numaplace_cli~"
"read-across-any-part~src/profile/classify_cost.c~s/__builtin_popcount(hit\[j\]) \* 2 >= parts/__builtin_popcount(hit[j]) >= 1/~unit.test_classify$~test_classify~"
"read-across-written~src/profile/classify_cost.c~s/ || v->wr > NPL_PROF_READ_MOSTLY || bins < 4/ || bins < 4/~unit.test_classify$~test_classify~"
"fault-backend-unread~src/profile/classify.c~s/    in->fault_samples = p->backend == NPL_BACKEND_FAULT;/    in->fault_samples = 0;/~cli.advise$~numaplace_cli~"
"migrate-rate-unread~src/profile/format.c~s/            rc = npl__jr_real(r, 1, 1e12, \&p->migrate_rate);/            rc = npl__jr_real(r, 1, 1e12, \&(double){0});/~unit.test_profile_format$~test_profile_format~"
"migrate-rate-ignored~src/profile/classify.c~s/    in->migrate_rate = p->migrate_rate;/    (void)0;/~unit.test_profile_format$~test_profile_format~"
"migrate-rate-unrecorded~cli/profile.c~s/        p->migrate_rate = machine_migrate_rate();/        (void)machine_migrate_rate;/~cli.profile$~numaplace_cli~"
"migration-unmeasured~cli/report/measure.c~s/    migration_rate(o, verbose, r);/    (void)migration_rate;/~cli.cli$~numaplace_cli~accepted: one node has nothing to migrate between; guest_cli --measure-report (3 nodes) fails on it"
"death-unsaid~src/sys/faults.c~s/    if (debug_faults \&\& si->si_code > 0)/    if (0 \&\& debug_faults \&\& si->si_code > 0)/~cli.profile$~all~"
"quick-pass-uncut~src/profile/sampler_phases.c~s/        if ((slow || now - window_began/        if ((0 || now - window_began/~cli.profile$~all~"
"barriers-unread~src/profile/format.c~s/            case 5: rc = npl__jr_u64(r, UINT64_C(1) << 62, \&ph->barriers); break;/            case 5: rc = npl__jr_u64(r, UINT64_C(1) << 62, \&(uint64_t){0}); break;/~unit.test_profile_format$~test_profile_format~"
"barrier-rounds-uncounted~src/profile/sampler_phases.c~s/        atomic_fetch_add(\&R->phases\[ph\].barriers, 1);/        (void)ph;/~cli.profile$~all~"
"windows-unpaced~src/profile/sampler_phases.c~s/ \&\& !paced_by_barriers(now) \&\&/ \&\&/~cli.profile$~all~"
"local-err-unwritten~src/profile/format_advice.c~s/    if (a->local_err >= 0) {/    if (0) {/~unit.test_profile_format$~test_profile_format~"
"slices-fill-off~src/profile/classify_rules.c~s/    uint64_t K = run ? equal_slices(w, owner, run) : 0;/    uint64_t K = 0;/~unit.test_classify$~test_classify~"
"guessed-chunks-unsaid~src/profile/classify.c~s/    if (w->map_guessed < 0.01)/    if (1)/~unit.test_classify$~test_classify~"
"neighbour-fill-off~src/profile/classify_candidates.c~s/    int rc = fill_from_neighbours(w, L, gown, loc);/    int rc = 0;/~unit.test_classify$~test_classify~"
"wald-uncertainty~src/profile/classify.c~s/    out->local_err = dmin(1, sampling + unseen);/    out->local_err = chosen->err;/~unit.test_classify$~test_classify~"
"replicate-never~src/defaults/auto.c~s/    return a->has_advice \&\& a->advice.replicate;/    return 0;/~host.auto$~test_auto~accepted: one node advises no replicas; guest_replicate (advised replicas, 4 nodes) fails on it"
"no-phase-next-touch~src/profile/classify_phases.c~s/out->nnext_touch = (uint32_t)ntargets;/out->nnext_touch = 0;/~unit.test_classify$~test_classify~"
"steady-windows-half~src/profile/profile.h~s/#define NPL_PROF_STEADY_MIN_WINDOWS 0.6/#define NPL_PROF_STEADY_MIN_WINDOWS 0.5/~unit.test_classify$~test_classify~"
"skew-is-owners~src/profile/classify_phases.c~s/v->change\[i\]\[j\] = !served \&\& !(v->skew_only\[i\] \&\& v->skew_only\[j\]);/v->change[i][j] = !served;/~unit.test_classify$~test_classify~"
"no-fill-from-run~src/profile/classify.c~s/v->xnode, v->xloc) < 0 || fill_from_run(w, v) < 0)/v->xnode, v->xloc) < 0)/~unit.test_classify$~test_classify~"
"table-no-seed~src/plan/policy_table.c~s/BLOCKS | NPL__POL_POSITIONAL_PAGES | NPL__POL_SEED,/BLOCKS | NPL__POL_POSITIONAL_PAGES,/~unit.test_policy_table$~test_policy_table~"
"table-bind-all-spread~src/plan/policy_table.c~s/NPL__SHAPE_ONE_NODE, first_node}/NPL__SHAPE_ONE_NODE, round_robin}/~unit.test_policy_map$~test_policy_map~"
"no-next-touch-register~preload/apply.c~s/if (!e->a->has_advice || !e->a->advice.nnext_touch)/if (1)/~cli.profile$|host.profile_apply$~numaplace_cli numaplace_preload test_profile_apply~"
)

only=" $* "
mkdir -p "$DIR"
echo "mutants: copying the tree to $COPY"
mkdir -p "$COPY"
find "$COPY" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} + # the build stays: ccache, make
tar -C "$SRC" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$COPY" -xf - || exit 1
B=$COPY/build
if [ ! -f "$B/CMakeCache.txt" ]; then
    # warnings are not errors here: a mutant often leaves a variable unused
    cmake -S "$COPY" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=OFF \
        -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
        -DCMAKE_Fortran_COMPILER_LAUNCHER=ccache >/dev/null || exit 1
fi
cmake "$B" >/dev/null || exit 1 # targets added since the last run
killed=0 survived=0 stale=0 accepted=0 bad=0
for m in "${MUTANTS[@]}"; do
    IFS='~' read -r name file expr tests targets why <<<"$m"
    [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || continue
    f=$COPY/$file
    cp "$SRC/$file" "$f"
    sed -i "$expr" "$f"
    if cmp -s "$SRC/$file" "$f"; then
        echo "stale     $name: the pattern no longer matches $file"
        stale=$((stale + 1)); bad=$((bad + 1)); continue
    fi
    # shellcheck disable=SC2086
    if ! cmake --build "$B" -j2 --target $targets >"$DIR/$name.build.log" 2>&1; then
        echo "BROKEN    $name: the mutant does not build ($DIR/$name.build.log): fix its pattern"
        bad=$((bad + 1))
    elif (cd "$B" && ctest -R "$tests" --output-on-failure >"$DIR/$name.log" 2>&1); then
        if [ -n "$why" ]; then
            echo "survived  $name ($tests) - $why"; accepted=$((accepted + 1))
        else
            echo "SURVIVED  $name: $tests passes ($DIR/$name.log)"; survived=$((survived + 1)); bad=$((bad + 1))
        fi
    else
        echo "killed    $name: by $(grep -o 'The following tests FAILED' "$DIR/$name.log" >/dev/null &&
            sed -n '/The following tests FAILED/,$p' "$DIR/$name.log" | grep -o '[a-z_]*\.[a-z_.]*' | sort -u | tr '\n' ' ')"
        killed=$((killed + 1))
    fi
    cp "$SRC/$file" "$f" # the next mutant starts from the product
done
# the copy's build back to the product
cmake --build "$B" -j2 --target numaplace_cli numaplace_preload >/dev/null 2>&1
echo "mutants: $killed killed, $survived survived, $accepted accepted survivors, $stale stale"
echo "mutants: $killed passed, $bad failed, $accepted skipped"
exit $bad
