#pragma once
// The hash workload's table and its per-thread bodies, for the GPU kernels
// (src/workloads/hash.cu) and the host tests, which run the same bodies on the
// CPU against an allocator of the host and strategies broken on purpose.
//
// A table of `buckets` chains. A node is one allocation: its header (key,
// next, the value's length) and a value of value_bytes(key) bytes, each byte
// stamp_byte(key, i). An insert allocates and fills a node, then pushes it on
// its bucket's chain under the bucket's lock; a delete unlinks its key's node
// under the lock and frees it. The verifier looks every key up: a key missing,
// present twice, present after its delete, or with a value that does not read
// back (two nodes sharing bytes) is an error.
#include <cstdint>

#include "workloads/workload_body.hpp"

namespace heapbench::workloads {

inline constexpr std::uint64_t kHashSeed = 0x68617368ull;  // "hash"

struct HashNode {
  std::uint64_t key;
  HashNode* next;
  std::uint32_t value_bytes;
  std::uint32_t pad;
  HEAPBENCH_HD unsigned char* value() { return reinterpret_cast<unsigned char*>(this + 1); }
  HEAPBENCH_HD const unsigned char* value() const { return reinterpret_cast<const unsigned char*>(this + 1); }
};
static_assert(sizeof(HashNode) == 24, "a node's header is 24 bytes: docs/workloads.md says so");

struct HashBucket {
  HashNode* head;
  unsigned lock;
  unsigned pad;
};

struct HashTable {
  HashBucket* buckets;
  std::uint64_t n_buckets;
  std::uint64_t lo, hi;  // value bytes are drawn from [lo, hi]
};

// Thread t's key: a bijection of t, so distinct threads have distinct keys.
HEAPBENCH_HD constexpr std::uint64_t hash_key(std::uint64_t t) { return mix64(t ^ kHashSeed) ^ kHashSeed; }
HEAPBENCH_HD constexpr std::uint64_t bucket_of(const HashTable& h, std::uint64_t key) {
  return mix64(key + 0x9E3779B97F4A7C15ull) % h.n_buckets;
}
HEAPBENCH_HD constexpr std::uint32_t value_bytes(const HashTable& h, std::uint64_t key) {
  return static_cast<std::uint32_t>(h.lo + mix64(key) % (h.hi - h.lo + 1));
}
// Buckets for `keys` keys at `load_pct` keys per bucket x 100 (at least one).
HEAPBENCH_HD constexpr std::uint64_t buckets_for(std::uint64_t keys, std::uint64_t load_pct) {
  const std::uint64_t b = (keys * 100 + load_pct - 1) / load_pct;
  return b == 0 ? 1 : b;
}
// Keys that a round deletes: every other thread's.
HEAPBENCH_HD constexpr bool deleted_key(std::uint64_t t) { return t % 2 == 0; }

// Spins for the bucket's lock; false once `give_up()` says so (the kernel's deadline).
template <class GiveUp>
HEAPBENCH_HD inline bool lock_bucket(HashBucket& b, GiveUp give_up) {
  while (hd_cas(&b.lock, 0u, 1u) != 0u) {
    if (give_up()) return false;
  }
  hd_fence();
  return true;
}
HEAPBENCH_HD inline void unlock_bucket(HashBucket& b) { hd_store_release(&b.lock, 0u); }

enum class HashOutcome : unsigned { done, null, timed_out, missing };

// Insert of thread t's key with allocator handle `a`: the node is filled before
// it is linked, so a reader under the lock sees it whole.
template <class A, class GiveUp>
HEAPBENCH_HD inline HashOutcome hash_insert(const A& a, const HashTable& h, std::uint64_t t, GiveUp give_up) {
  const std::uint64_t key = hash_key(t);
  const std::uint32_t bytes = value_bytes(h, key);
  auto* node = static_cast<HashNode*>(a.allocate(sizeof(HashNode) + bytes, 16));
  if (node == nullptr) return HashOutcome::null;
  node->key = key;
  node->value_bytes = bytes;
  for (std::uint32_t i = 0; i < bytes; ++i) node->value()[i] = stamp_byte(key, i);
  HashBucket& b = h.buckets[bucket_of(h, key)];
  if (!lock_bucket(b, give_up)) {
    a.deallocate(node);
    return HashOutcome::timed_out;
  }
  node->next = b.head;
  b.head = node;
  unlock_bucket(b);
  return HashOutcome::done;
}

// Delete of thread t's key: unlinks its node under the lock, frees it after;
// missing where the key is not in the table (the verifier then says so too).
// At most `max_walk` nodes are walked (a chain broken into a cycle ends).
template <class A, class GiveUp>
HEAPBENCH_HD inline HashOutcome hash_delete(const A& a, const HashTable& h, std::uint64_t t, GiveUp give_up,
                                            std::uint64_t max_walk) {
  const std::uint64_t key = hash_key(t);
  HashBucket& b = h.buckets[bucket_of(h, key)];
  if (!lock_bucket(b, give_up)) return HashOutcome::timed_out;
  HashNode* found = nullptr;
  std::uint64_t walked = 0;
  for (HashNode** link = &b.head; *link != nullptr && walked++ < max_walk; link = &(*link)->next) {
    if ((*link)->key == key) {
      found = *link;
      *link = found->next;
      break;
    }
  }
  unlock_bucket(b);
  if (found == nullptr) return HashOutcome::missing;
  a.deallocate(found);
  return HashOutcome::done;
}

// Frees every node of bucket k (the table is no one else's by then), at most
// `max_walk` of them: a chain broken into a cycle (a node linked twice, which
// the verifier has reported) must not keep the launch from ending.
template <class A>
HEAPBENCH_HD inline std::uint64_t hash_release_bucket(const A& a, const HashTable& h, std::uint64_t k,
                                                      std::uint64_t max_walk) {
  std::uint64_t freed = 0;
  for (HashNode* n = h.buckets[k].head; n != nullptr && freed < max_walk;) {
    HashNode* next = n->next;
    a.deallocate(n);
    n = next;
    ++freed;
  }
  h.buckets[k].head = nullptr;
  return freed;
}

// What the verifier found of thread t's key after the inserts (`deleted`
// false) or after the deletes too: 0 where all is well, else one of these.
enum HashFault : unsigned { kHashOk = 0, kHashMissing = 1, kHashDuplicate = 2, kHashNotDeleted = 4, kHashCorrupt = 8 };

// `max_walk` bounds a chain's walk: a chain longer than every node there is
// has a cycle (a node linked twice), which is corruption too.
HEAPBENCH_HD inline unsigned hash_check(const HashTable& h, std::uint64_t t, bool after_deletes, std::uint64_t max_walk) {
  const std::uint64_t key = hash_key(t);
  const bool expected = !(after_deletes && deleted_key(t));
  unsigned seen = 0, fault = kHashOk;
  std::uint64_t walked = 0;
  for (const HashNode* n = h.buckets[bucket_of(h, key)].head; n != nullptr; n = n->next) {
    if (++walked > max_walk) return kHashCorrupt;
    if (n->key != key) continue;
    ++seen;
    bool bad = n->value_bytes != value_bytes(h, key);
    for (std::uint32_t i = 0; i < n->value_bytes && !bad; ++i) bad = n->value()[i] != stamp_byte(key, i);
    if (bad) fault |= kHashCorrupt;
  }
  if (expected && seen == 0) fault |= kHashMissing;
  if (seen > 1) fault |= kHashDuplicate;
  if (!expected && seen > 0) fault |= kHashNotDeleted;
  return fault;
}

// Nodes in bucket k (bounded as hash_check's walk): the verifier's second count.
HEAPBENCH_HD inline std::uint64_t hash_chain_length(const HashTable& h, std::uint64_t k, std::uint64_t max_walk) {
  std::uint64_t n = 0;
  for (const HashNode* p = h.buckets[k].head; p != nullptr && n <= max_walk; p = p->next) ++n;
  return n;
}

}  // namespace heapbench::workloads
