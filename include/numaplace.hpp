/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file numaplace.hpp
 * @brief numaplace.hpp - C++17 interface to numaplace, header-only over the C API (numaplace.h).
 *
 * - numaplace::policy     a memory policy as a value (copy = an independent copy)
 * - numaplace::array<T>   an RAII array placed under a policy: 1D, or a 2D row-major view
 * - numaplace::allocator  a std::allocator-compatible allocator placing each block under a policy
 * - numaplace::error      thrown on failure: a std::system_error with the errno and the library's text
 * - pinning               pin_self(), pinned_thread(), where_am_i(), local_nodes()
 *
 * Node and CPU numbers are OS ids, as in the C API. Link with -lnumaplace; include
 * <numaplace/omp.h> first (with OpenMP on) to get pin_omp_team(). Usage: docs/BINDINGS.md.
 */
#ifndef NUMAPLACE_HPP
#define NUMAPLACE_HPP

#include <numaplace.h>
#include <numaplace/migrate.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

/** @defgroup npl_cxx C++ interface
 *  Header-only C++17 classes over the C API; every failure throws numaplace::error.
 *  @{ */

/** Everything of the C++ interface. */
namespace numaplace {

/** A failed library call: code() is the errno (std::generic_category()), what() names the call
 *  and carries npl_last_error()'s text. */
class error : public std::system_error {
public:
    /** An error with errno value `err` and message `what`. */
    error(int err, const std::string &what) : std::system_error(err, std::generic_category(), what) {}
};

namespace detail {
/** Throw numaplace::error for the calling thread's errno, naming `call`. */
[[noreturn]] inline void fail(const char *call)
{
    int err = errno ? errno : EINVAL;
    std::string msg(call);
    const char *text = npl_last_error();
    if (text && *text)
        msg += std::string(": ") + text;
    throw error(err, msg);
}
/** Throw unless rc >= 0. @return rc. */
inline int check(int rc, const char *call)
{
    if (rc < 0)
        fail(call);
    return rc;
}
/** Frees a C policy (unique_ptr deleter). */
struct policy_deleter {
    /** Free p (npl_policy_free). */
    void operator()(npl_policy *p) const { npl_policy_free(p); }
};
} // namespace detail

/** The policy kinds (npl_policy_kind). */
enum class kind : int {
    first_touch = NPL_FIRST_TOUCH,   /**< the kernel decides */
    bind_all = NPL_BIND_ALL,         /**< all on the listed nodes */
    bind_block = NPL_BIND_BLOCK,     /**< block k on the node of thread k */
    cyclic = NPL_CYCLIC,             /**< page i on node i mod M */
    cyclic_block = NPL_CYCLIC_BLOCK, /**< block b on node b mod M */
    skew_mapp = NPL_SKEW_MAPP,       /**< page i on (i + i/M + 1) mod M */
    prime_mapp = NPL_PRIME_MAPP,     /**< cyclic over P virtual nodes */
    random = NPL_RANDOM,             /**< seeded uniform node per page */
    random_block = NPL_RANDOM_BLOCK, /**< seeded uniform node per block */
    weighted = NPL_WEIGHTED          /**< interleave with per-node weights */
};

/** A memory policy as a value. Copies are independent (npl_policy_dup); the factories and
 *  parse() throw numaplace::error (EINVAL) on bad input. Nodes are checked when the policy is
 *  used (allocation, set_policy), as in the C API. */
class policy {
public:
    /** first_touch. */
    policy() : policy(kind::first_touch) {}
    /** A policy of kind `k` over `nodes` (OS ids; empty: all usable nodes). */
    explicit policy(kind k, const std::vector<int> &nodes = {})
    {
        npl_policy *p = nullptr;
        detail::check(npl_policy_create(&p, static_cast<npl_policy_kind>(k),
                                        nodes.empty() ? nullptr : nodes.data(),
                                        static_cast<int>(nodes.size())),
                      "npl_policy_create");
        p_.reset(p);
    }
    /** Parse the policy string syntax ("cyclic_block:4@0,1", see npl_policy_parse()). */
    static policy parse(const std::string &text)
    {
        npl_policy *p = nullptr;
        detail::check(npl_policy_parse(&p, text.c_str()), "npl_policy_parse");
        return policy(p);
    }
    /** Take ownership of a C policy (it is freed with this object). */
    static policy adopt(npl_policy *p)
    {
        if (!p)
            throw error(EINVAL, "numaplace::policy::adopt: NULL policy");
        return policy(p);
    }
    /** @name Factories, one per kind
     *  nodes: OS ids (empty: all usable nodes).
     *  @{ */
    /** first_touch: the kernel decides. @return the policy. */
    static policy first_touch() { return policy(kind::first_touch); }
    /** bind_all over nodes. @return the policy. */
    static policy bind_all(const std::vector<int> &nodes = {}) { return policy(kind::bind_all, nodes); }
    /** bind_block for a static schedule of `threads` threads (0: default) pinned with `pin`
     *  ("compact", "scatter"; "": default). @return the policy. */
    static policy bind_block(int threads = 0, const std::string &pin = "",
                             const std::vector<int> &nodes = {})
    {
        policy p(kind::bind_block, nodes);
        detail::check(npl_policy_set_threads(p.get(), threads, pin.c_str()), "npl_policy_set_threads");
        return p;
    }
    /** cyclic (interleave page by page). @return the policy. */
    static policy cyclic(const std::vector<int> &nodes = {}) { return policy(kind::cyclic, nodes); }
    /** cyclic_block with blocks of `block_pages` pages (0: from the thread schedule).
     *  @return the policy. */
    static policy cyclic_block(std::size_t block_pages = 0, const std::vector<int> &nodes = {})
    {
        policy p(kind::cyclic_block, nodes);
        if (block_pages)
            p.block_pages(block_pages);
        return p;
    }
    /** skew_mapp. @return the policy. */
    static policy skew_mapp(const std::vector<int> &nodes = {}) { return policy(kind::skew_mapp, nodes); }
    /** prime_mapp over `prime` virtual nodes (0: the smallest prime above the node count).
     *  @return the policy. */
    static policy prime_mapp(int prime = 0, const std::vector<int> &nodes = {})
    {
        policy p(kind::prime_mapp, nodes);
        if (prime)
            detail::check(npl_policy_set_prime(p.get(), prime), "npl_policy_set_prime");
        return p;
    }
    /** random with a seed. @return the policy. */
    static policy random(std::uint64_t seed = 0, const std::vector<int> &nodes = {})
    {
        policy p(kind::random, nodes);
        detail::check(npl_policy_set_seed(p.get(), seed), "npl_policy_set_seed");
        return p;
    }
    /** random_block: blocks of `block_pages` pages on seeded random nodes. @return the policy. */
    static policy random_block(std::size_t block_pages, std::uint64_t seed = 0,
                               const std::vector<int> &nodes = {})
    {
        policy p(kind::random_block, nodes);
        p.block_pages(block_pages);
        detail::check(npl_policy_set_seed(p.get(), seed), "npl_policy_set_seed");
        return p;
    }
    /** weighted: weights[i] pages on nodes[i] per round. @return the policy. */
    static policy weighted(const std::vector<int> &nodes, const std::vector<int> &weights)
    {
        if (nodes.size() != weights.size())
            throw error(EINVAL, "numaplace::policy::weighted: nodes and weights differ in size");
        policy p(kind::weighted);
        detail::check(npl_policy_set_weights(p.get(), nodes.data(), weights.data(),
                                             static_cast<int>(nodes.size())),
                      "npl_policy_set_weights");
        return p;
    }
    /** @} */

    /** Copy: an independent policy (npl_policy_dup). */
    policy(const policy &o) : p_(dup(o.p_.get())) {}
    /** Copy-assign: an independent policy. @return *this. */
    policy &operator=(const policy &o)
    {
        if (this != &o)
            p_.reset(dup(o.p_.get()));
        return *this;
    }
    /** Move (the moved-from policy is first_touch again when reassigned; do not use it). */
    policy(policy &&) noexcept = default;
    /** Move-assign. @return *this. */
    policy &operator=(policy &&) noexcept = default;

    /** Blocks of `pages` pages (block kinds). @return *this. */
    policy &block_pages(std::size_t pages)
    {
        detail::check(npl_policy_set_block_pages(get(), pages), "npl_policy_set_block_pages");
        return *this;
    }
    /** Blocks of `units` rows/columns/planes (block kinds). @return *this. */
    policy &block_units(std::size_t units)
    {
        detail::check(npl_policy_set_block_units(get(), units), "npl_policy_set_block_units");
        return *this;
    }
    /** The kind. @return it. */
    numaplace::kind get_kind() const { return static_cast<numaplace::kind>(npl_policy_get_kind(get())); }
    /** The canonical string (parse() gives the same policy back). @return it. */
    std::string str() const
    {
        int n = detail::check(npl_policy_format(get(), nullptr, 0), "npl_policy_format");
        std::string s(static_cast<std::size_t>(n) + 1, '\0');
        npl_policy_format(get(), &s[0], s.size());
        s.resize(static_cast<std::size_t>(n));
        return s;
    }
    /** MAi's rule: 1 if threads should be pinned for it. @return true or false. */
    bool wants_pinning() const { return npl_policy_wants_pinning(get()) == 1; }
    /** The C policy (owned by this object). @return it, never NULL. */
    npl_policy *get() const { return p_.get(); }

private:
    explicit policy(npl_policy *p) : p_(p) {}
    static npl_policy *dup(const npl_policy *p)
    {
        npl_policy *c = npl_policy_dup(p);
        if (!c)
            detail::fail("npl_policy_dup");
        return c;
    }
    std::unique_ptr<npl_policy, detail::policy_deleter> p_;
};

/** Intended vs actual counts of an array (struct npl_check: the C function of the same name
 *  hides the struct's plain name in C++). */
using check_result = struct npl_check;
/** What a migration did (struct npl_migrate_result). */
using migrate_result = struct npl_migrate_result;
/** What a library array is (struct npl_array_info). */
using array_info = struct npl_array_info;

/** Print a policy's canonical string. @return os. */
inline std::ostream &operator<<(std::ostream &os, const policy &p) { return os << p.str(); }

/** Node OS id of the page holding `addr` (npl_query_pages()).
 *  @return the node, or a negative errno for a page that is not present (-ENOENT) or mapped. */
inline int node_of(const void *addr)
{
    int node = 0;
    detail::check(npl_query_pages(addr, 1, &node, 1), "npl_query_pages");
    return node;
}

/** Node of every page of [addr, addr+bytes) (negative errno for absent pages). @return them. */
inline std::vector<int> page_nodes(const void *addr, std::size_t bytes)
{
    std::size_t psz = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::size_t off = reinterpret_cast<std::uintptr_t>(addr) % psz;
    std::vector<int> nodes((off + bytes + psz - 1) / psz);
    int n = detail::check(npl_query_pages(addr, bytes, nodes.data(), nodes.size()), "npl_query_pages");
    nodes.resize(static_cast<std::size_t>(n));
    return nodes;
}

/** An RAII array of T placed under a policy: n elements (1D) or rows x cols in row-major order
 *  (2D: a row is the distribution unit). Zero-filled, page-aligned, freed when it goes out of
 *  scope (npl_free). Move-only. T must be trivially copyable and destructible (numbers, PODs). */
template <class T> class array {
    static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                  "numaplace::array<T> needs a trivially copyable and destructible T");

public:
    /** n elements under pol with NPL_F_* flags. */
    array(std::size_t n, const policy &pol, unsigned flags = 0) : array(1, n, pol, flags, 1) {}
    /** rows x cols elements, row-major, under pol with NPL_F_* flags. */
    array(std::size_t rows, std::size_t cols, const policy &pol, unsigned flags = 0)
        : array(rows, cols, pol, flags, 2)
    {
    }
    ~array() { npl_free(p_); }
    array(const array &) = delete;
    array &operator=(const array &) = delete;
    /** Move: o becomes empty. */
    array(array &&o) noexcept : p_(std::exchange(o.p_, nullptr)), rows_(o.rows_), cols_(o.cols_) {}
    /** Move-assign: frees this array first. @return *this. */
    array &operator=(array &&o) noexcept
    {
        if (this != &o) {
            npl_free(p_);
            p_ = std::exchange(o.p_, nullptr);
            rows_ = o.rows_;
            cols_ = o.cols_;
        }
        return *this;
    }

    /** @return the first element (nullptr once moved from). */
    T *data() noexcept { return p_; }
    /** @return the first element. */
    const T *data() const noexcept { return p_; }
    /** @return the number of elements. */
    std::size_t size() const noexcept { return p_ ? rows_ * cols_ : 0; }
    /** @return the number of bytes. */
    std::size_t bytes() const noexcept { return size() * sizeof(T); }
    /** @return rows (1 for a 1D array). */
    std::size_t rows() const noexcept { return rows_; }
    /** @return columns (elements of a 1D array). */
    std::size_t cols() const noexcept { return cols_; }
    /** @return element i (no bounds check). */
    T &operator[](std::size_t i) noexcept { return p_[i]; }
    /** @return element i (no bounds check). */
    const T &operator[](std::size_t i) const noexcept { return p_[i]; }
    /** @return element (i, j) of the row-major view (no bounds check). */
    T &operator()(std::size_t i, std::size_t j) noexcept { return p_[i * cols_ + j]; }
    /** @return element (i, j) of the row-major view (no bounds check). */
    const T &operator()(std::size_t i, std::size_t j) const noexcept { return p_[i * cols_ + j]; }
    /** @return iterator to the first element. */
    T *begin() noexcept { return p_; }
    /** @return iterator past the last element. */
    T *end() noexcept { return p_ + size(); }

    /** Re-place the whole array under pol (pages move, data stays; npl_apply). */
    void set_policy(const policy &pol, unsigned flags = 0)
    {
        detail::check(npl_apply(p_, pol.get(), flags), "npl_apply");
    }
    /** Re-place rows [first, first+n) under pol (npl_apply_part). */
    void set_policy_rows(std::size_t first, std::size_t n, const policy &pol, unsigned flags = 0)
    {
        detail::check(npl_apply_part(p_, first, n, pol.get(), flags), "npl_apply_part");
    }
    /** Move every page to `node` (npl_migrate_array). Pages that could not move are counted in
     *  the result; only a failure of the call itself throws. @return what moved. */
    migrate_result migrate(int node)
    {
        migrate_result r{};
        errno = 0;
        if (npl_migrate_array(p_, node, &r) < 0 && !(r.failed > 0 && r.first_errno == errno))
            detail::fail("npl_migrate_array");
        return r;
    }
    /** Intended vs actual, page by page (npl_check). @return the counts. */
    check_result check() const
    {
        check_result c{};
        detail::check(::npl_check(p_, &c), "npl_check");
        return c;
    }
    /** @return the node of every page (negative errno for pages not present). */
    std::vector<int> nodes() const { return page_nodes(p_, bytes()); }
    /** @return what the array is and what was done to it (npl_array_info). */
    array_info info() const
    {
        array_info i{};
        detail::check(npl_array_info(p_, &i), "npl_array_info");
        return i;
    }
    /** @return the canonical string of the policy of the last whole-array placement. */
    std::string policy_string() const
    {
        int n = detail::check(npl_array_policy(p_, nullptr, 0), "npl_array_policy");
        std::string s(static_cast<std::size_t>(n) + 1, '\0');
        npl_array_policy(p_, &s[0], s.size());
        s.resize(static_cast<std::size_t>(n));
        return s;
    }

private:
    array(std::size_t rows, std::size_t cols, const policy &pol, unsigned flags, int ndims)
        : rows_(rows), cols_(cols)
    {
        npl_shape s{};
        s.elem_size = sizeof(T);
        s.ndims = ndims;
        s.dims[0] = ndims == 1 ? cols : rows;
        s.dims[1] = ndims == 1 ? 0 : cols;
        s.order = NPL_ROW_MAJOR;
        p_ = static_cast<T *>(npl_alloc_array(&s, pol.get(), flags));
        if (!p_)
            detail::fail("npl_alloc_array");
    }
    T *p_ = nullptr;
    std::size_t rows_ = 0, cols_ = 0;
};

/** A std::allocator-compatible allocator: every allocate() is a library array placed under the
 *  allocator's policy (at least one page each: meant for large buffers such as a std::vector's).
 *  All numaplace allocators compare equal, because npl_free() releases any library array
 *  whatever its policy; the policy travels with a container on move-assignment and swap and stays
 *  with the destination on copy-assignment. allocate() throws std::bad_alloc when memory runs out
 *  (ENOMEM), numaplace::error for any other failure (a bad node: EINVAL, EXDEV). */
template <class T> class allocator {
public:
    using value_type = T;                                        /**< element type */
    using propagate_on_container_move_assignment = std::true_type; /**< policy follows the memory */
    using propagate_on_container_swap = std::true_type;            /**< policy follows the memory */
    using is_always_equal = std::true_type;                        /**< npl_free frees any array */

    /** An allocator placing under first_touch. */
    allocator() : allocator(policy::first_touch()) {}
    /** An allocator placing under pol with NPL_F_* flags. */
    explicit allocator(const policy &pol, unsigned flags = 0)
        : pol_(std::make_shared<const policy>(pol)), flags_(flags)
    {
    }
    /** Rebind copy: same policy and flags. */
    template <class U>
    allocator(const allocator<U> &o) noexcept : pol_(o.shared_policy()), flags_(o.flags()) {}

    /** n elements under the policy (n == 0 gets one element). @return the memory. */
    T *allocate(std::size_t n)
    {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T))
            throw std::bad_array_new_length();
        npl_shape s{};
        s.elem_size = sizeof(T);
        s.ndims = 1;
        s.dims[0] = n ? n : 1;
        s.order = NPL_ROW_MAJOR;
        void *p = npl_alloc_array(&s, pol_->get(), flags_);
        if (!p) {
            if (errno == ENOMEM)
                throw std::bad_alloc();
            detail::fail("npl_alloc_array");
        }
        return static_cast<T *>(p);
    }
    /** Release memory from allocate(). */
    void deallocate(T *p, std::size_t) noexcept { npl_free(p); }

    /** @return the policy. */
    const policy &get_policy() const noexcept { return *pol_; }
    /** @return the shared policy (for rebinding). */
    std::shared_ptr<const policy> shared_policy() const noexcept { return pol_; }
    /** @return the NPL_F_* flags. */
    unsigned flags() const noexcept { return flags_; }

private:
    std::shared_ptr<const policy> pol_;
    unsigned flags_;
};

/** All numaplace allocators are equal (npl_free releases any library array). @return true. */
template <class T, class U> bool operator==(const allocator<T> &, const allocator<U> &) noexcept
{
    return true;
}
/** @return false. */
template <class T, class U> bool operator!=(const allocator<T> &, const allocator<U> &) noexcept
{
    return false;
}

/** Where a thread runs. */
struct place {
    int cpu;  /**< CPU OS id */
    int node; /**< node OS id */
};

/** The CPU and node the calling thread runs on now. @return them. */
inline place where_am_i()
{
    place p{-1, -1};
    detail::check(npl_where_am_i(&p.cpu, &p.node), "npl_where_am_i");
    return p;
}

/** Pin the calling thread as thread n of `strategy` ("compact", "scatter", a CPU list), inside
 *  this process's allowed CPUs. @return the CPU it is bound to. */
inline int pin_self(const std::string &strategy, int n)
{
    return detail::check(npl_pin_self(strategy.c_str(), n), "npl_pin_self");
}

/** A std::thread that pins itself as thread n of `strategy` before it runs f(args...). Throws
 *  numaplace::error (after joining the thread, which then never runs f) if pinning fails.
 *  @return the running thread. */
template <class F, class... Args>
std::thread pinned_thread(const std::string &strategy, int n, F &&f, Args &&...args)
{
    std::promise<void> pinned;
    std::future<void> ready = pinned.get_future();
    std::thread t([strategy, n, pinned = std::move(pinned)](auto &&fn, auto &&...a) mutable {
        try {
            pin_self(strategy, n);
        } catch (...) {
            pinned.set_exception(std::current_exception());
            return;
        }
        pinned.set_value();
        std::forward<decltype(fn)>(fn)(std::forward<decltype(a)>(a)...);
    }, std::forward<F>(f), std::forward<Args>(args)...);
    try {
        ready.get();
    } catch (...) {
        t.join();
        throw;
    }
    return t;
}

#if defined(NUMAPLACE_OMP_H) || defined(DOXYGEN)
/** Pin every thread of an OpenMP team (npl_omp_pin_team; include <numaplace/omp.h> first). */
inline void pin_omp_team(const std::string &strategy)
{
    detail::check(npl_omp_pin_team(strategy.c_str()), "npl_omp_pin_team");
}
#endif

/** The nodes (OS ids, ascending) this process may allocate on AND has CPUs on: inside an MPI rank
 *  bound with --bind-to numa, the rank's own nodes. Use them as a policy's node list to keep
 *  data local to the rank. @return them (empty if the process has no allowed CPU on any node). */
inline std::vector<int> local_nodes()
{
    const npl_topo *t = npl_topo_self();
    if (!t)
        detail::fail("npl_topo_self");
    std::vector<int> nodes;
    int n = detail::check(npl_topo_node_count(t, 1), "npl_topo_node_count");
    for (int i = 0; i < n; i++) {
        npl_node_info info{};
        int id = npl_topo_node_id(t, i);
        if (npl_topo_node_info(t, id, &info) == 0 && info.allowed && info.ncpus_allowed > 0 &&
            info.memory_bytes > 0)
            nodes.push_back(id);
    }
    return nodes;
}

} // namespace numaplace
/** @} */
#endif /* NUMAPLACE_HPP */
