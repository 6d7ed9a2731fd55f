#include "trainsim/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <tuple>
#include <type_traits>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#define TRAINSIM_MMAP 1
#endif

#include "trainsim/common/error.hpp"
#include "trainsim/cost/link_sharing.hpp"
#include "trainsim/engine/limits.hpp"
#include "trainsim/engine/tp_lockstep.hpp"

namespace trainsim {
namespace {

constexpr int kStreams = 5;
constexpr int kPrefetchAhead = 12;  // task records (measured: 3 to 24 all help, 12 best)
constexpr double kPsPerS = 1e12;
// Compute shares of transfers (Task::compute_share) in exact integers: units of 1/65536 of a
// device's compute. A compute task's work is its picoseconds x kShareUnits, done at
// (kShareUnits - the running transfers' units) per picosecond.
constexpr std::int64_t kShareUnits = 65536;

// Communication kind of a span category (exposed-communication order), -1 for compute.
constexpr std::array<std::int8_t, kNumCategories> kCommKind = [] {
  std::array<std::int8_t, kNumCategories> k{};
  k.fill(-1);
  k[static_cast<std::size_t>(SpanCategory::tp_comm)] = 0;
  k[static_cast<std::size_t>(SpanCategory::cp_comm)] = 1;
  k[static_cast<std::size_t>(SpanCategory::ep_comm)] = 2;
  k[static_cast<std::size_t>(SpanCategory::pp_comm)] = 3;
  k[static_cast<std::size_t>(SpanCategory::dp_comm)] = 4;
  return k;
}();

// The event queue. Events are ordered by (time, priority, sequence of the push). Ranks that
// move in lockstep (full mode) push many events with the same time and priority in a row,
// so the queue keeps FIFO buckets: a push joins the bucket most recently opened for its
// priority when the time matches, else opens a new one. Within a bucket pushes are in
// sequence order, and a priority's buckets hold disjoint, increasing sequence ranges, so
// ordering buckets by (time, priority, opening sequence) and draining each front to back
// gives exactly the (time, priority, sequence) order. Buckets live in a min-heap of 128-bit
// keys: time in the high 64 bits, then 3 bits of priority, 31 of opening sequence and the
// 30-bit bucket index (which never decides: opening sequences are unique).
// Without buckets (Buckets = false: one rank per stage, where pushes rarely share a time)
// every event is its own key, the index being the instance.
// An instance can have two events queued at once: a compute finish that a transfer's end
// moves earlier is queued again, its first event left to be dropped when it pops
// (Replayer::schedule_compute). So a bucket chains entries of its own, not instances: linked
// through the instance, the second push cut the first event's bucket after it, and every
// event behind it there (the stage's other ranks, in lockstep) was lost; the ranks that lost
// theirs never finished, and the replay stopped as a deadlock (TP 8 across servers, PP 4
// v 2, DP 2 with overlap_grad_reduce, full mode: tests/engine/event_queue_test.cpp).
constexpr int kIndexBits = 30;
constexpr int kSequenceBits = 31;
constexpr std::int64_t kMaxInstances = (std::int64_t{1} << kIndexBits) - 1;

template <bool Buckets>
class EventQueue {
 public:
  using Key = unsigned __int128;

  EventQueue() { open_.fill(-1); }
  // Room for `events` queued at once (a few per device and stream).
  void reserve(std::size_t events) {
    if (Buckets) entries_.reserve(events);
    heap_.reserve(events);
    buckets_.reserve(events);
  }
  bool empty() const { return heap_.empty(); }
  // Time and priority of the earliest event (not empty).
  std::pair<SimTime, std::uint32_t> top() const {
    const Key k = heap_.front();
    return {static_cast<SimTime>(static_cast<std::uint64_t>(k >> 64)),
            static_cast<std::uint32_t>(static_cast<std::uint64_t>(k) >> (kSequenceBits + kIndexBits) & 7)};
  }

  void push(SimTime time, std::uint32_t priority, std::int32_t inst) {
    if constexpr (!Buckets) {
      if (sequence_ >= (std::uint64_t{1} << kSequenceBits)) throw SimError("replay: too many events");
      heap_push(key(time, priority, sequence_++, inst));
      return;
    }
    std::int32_t entry;
    if (!free_entries_.empty()) {
      entry = free_entries_.back();
      free_entries_.pop_back();
      entries_[static_cast<std::size_t>(entry)] = Entry{inst, -1};
    } else {
      entry = static_cast<std::int32_t>(entries_.size());
      entries_.push_back(Entry{inst, -1});
    }
    const std::int32_t open = open_[priority];
    if (open >= 0 && open_time_[priority] == time) {
      Bucket& b = buckets_[static_cast<std::size_t>(open)];
      entries_[static_cast<std::size_t>(b.tail)].next = entry;
      b.tail = entry;
      return;
    }
    std::int32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<std::int32_t>(buckets_.size());
      buckets_.push_back({});
    }
    buckets_[static_cast<std::size_t>(index)] = Bucket{entry, entry};
    if (sequence_ >= (std::uint64_t{1} << kSequenceBits)) throw SimError("replay: too many events");
    heap_push(key(time, priority, sequence_++, index));
    open_[priority] = index;
    open_time_[priority] = time;
  }

  // The earliest event: its time and instance.
  std::int32_t pop(SimTime& time) {
    const Key top = heap_.front();
    time = static_cast<SimTime>(static_cast<std::uint64_t>(top >> 64));
    const auto index =
        static_cast<std::int32_t>(static_cast<std::uint64_t>(top) & ((std::uint64_t{1} << kIndexBits) - 1));
    if constexpr (!Buckets) {
      heap_pop();
      return index;
    }
    Bucket& b = buckets_[static_cast<std::size_t>(index)];
    const std::int32_t entry = b.head;
    const Entry& e = entries_[static_cast<std::size_t>(entry)];
    const std::int32_t inst = e.inst;
    b.head = e.next;
    free_entries_.push_back(entry);
    if (b.head < 0) {
      heap_pop();
      free_.push_back(index);
      const auto priority =
          static_cast<std::size_t>(static_cast<std::uint64_t>(top) >> (kSequenceBits + kIndexBits) & 7);
      if (open_[priority] == index) open_[priority] = -1;
    }
    return inst;
  }

 private:
  struct Bucket {
    std::int32_t head = -1, tail = -1;  // entries_
  };
  struct Entry {
    std::int32_t inst, next;  // the event's instance, the next entry of its bucket (-1: none)
  };

  static Key key(SimTime time, std::uint32_t priority, std::uint64_t sequence, std::int32_t index) {
    const std::uint64_t low = (static_cast<std::uint64_t>(priority) << (kSequenceBits + kIndexBits)) |
                              (sequence << kIndexBits) | static_cast<std::uint64_t>(index);
    return (static_cast<Key>(static_cast<std::uint64_t>(time)) << 64) | low;
  }

  // Four children per node: a node's children share a cache line.
  void heap_push(Key key) {
    std::size_t i = heap_.size();
    heap_.push_back(key);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (heap_[parent] < key) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = key;
  }
  // Keys are unique (they hold the push sequence): the smallest child is unique, and the
  // pop order does not depend on how it is found.
  void heap_pop() {
    const Key last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    Key* h = heap_.data();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      std::size_t m;
      if (first + 4 <= n) {  // a full node: a tournament of its four children
        const std::size_t a = h[first + 1] < h[first] ? first + 1 : first;
        const std::size_t b = h[first + 3] < h[first + 2] ? first + 3 : first + 2;
        m = h[b] < h[a] ? b : a;
      } else {
        if (first >= n) break;
        m = first;
        for (std::size_t c = first + 1; c < n; ++c)
          if (h[c] < h[m]) m = c;
      }
      if (last < h[m]) break;
      h[i] = h[m];
      i = m;
    }
    h[i] = last;
  }

  std::vector<Key> heap_;
  std::vector<Bucket> buckets_;
  std::vector<std::int32_t> free_;
  std::vector<Entry> entries_;  // queued events of the buckets, and free ones
  std::vector<std::int32_t> free_entries_;
  std::array<std::int32_t, 8> open_{};
  std::array<SimTime, 8> open_time_{};
  std::uint64_t sequence_ = 0;
};

// The full mode's event queue: the same (time, priority, sequence) order as EventQueue, as a
// radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
// problem", JACM 1990). The replay never queues an event before the one it last took, so
// events sit in bins by the highest bit where their time differs from the last time taken
// (`base_`): bin 0 holds that time itself, bin b > 0 times differing first in bit b - 1, and
// every time in a lower bin is earlier than every time in a higher one. A push appends to
// its bin; when bin 0 is empty the lowest non-empty bin's earliest time becomes the base and
// its events move down, each only to a lower bin. With every device's speed drawn (issue
// 19), few events share a time and a comparison heap of ~10^5 events misses the cache at
// every level, where these appends and scans run through memory in order.
// Bin 0 is one FIFO per priority: the events it receives when the base moves are put in
// (priority, sequence) order first, and a later push at the base time has the largest
// sequence yet, so it goes to the back of its priority's FIFO.
// An event before the base (only a time past the clock's end, wrapped negative: the loop
// then stops on it) is kept apart and taken first, earliest first, as EventQueue would.
class RadixQueue {
 public:
  RadixQueue() = default;
  void reserve(std::size_t events) {
    for (auto& f : fifo_) f.reserve(events / 4);
    sorted_.reserve(events / 4);
  }
  bool empty() const { return size_ == 0; }
  // Time and priority of the earliest event (not empty).
  std::pair<SimTime, std::uint32_t> top() {
    if (!past_.empty()) {
      const Item& p = past_[earliest_past()];
      return {p.time, static_cast<std::uint32_t>(p.order >> (kSequenceBits + kIndexBits))};
    }
    if (fifo_mask_ == 0) refill();
    return {base_, static_cast<std::uint32_t>(__builtin_ctz(fifo_mask_))};
  }

  void push(SimTime time, std::uint32_t priority, std::int32_t inst) {
    if (sequence_ >= (std::uint64_t{1} << kSequenceBits)) throw SimError("replay: too many events");
    ++size_;
    if (time == base_) {  // the latest sequence: the back of its priority's FIFO
      fifo_[priority].push_back(inst);
      fifo_mask_ |= 1u << priority;
      ++sequence_;
      return;
    }
    const Item item{time, (static_cast<std::uint64_t>(priority) << (kSequenceBits + kIndexBits)) |
                              (sequence_++ << kIndexBits) | static_cast<std::uint64_t>(inst)};
    if (time < base_) {
      past_.push_back(item);
      return;
    }
    const int b = bin(time);
    bins_[static_cast<std::size_t>(b)].push_back(item);
    bin_mask_ |= std::uint64_t{1} << (b - 1);
  }

  // The earliest event: its time and instance.
  std::int32_t pop(SimTime& time) {
    --size_;
    if (!past_.empty()) {
      const std::size_t i = earliest_past();
      const Item p = past_[i];
      past_.erase(past_.begin() + static_cast<std::ptrdiff_t>(i));
      time = p.time;
      return static_cast<std::int32_t>(p.order & ((std::uint64_t{1} << kIndexBits) - 1));
    }
    if (fifo_mask_ == 0) refill();
    const int p = __builtin_ctz(fifo_mask_);
    auto& f = fifo_[static_cast<std::size_t>(p)];
    std::size_t& head = head_[static_cast<std::size_t>(p)];
    const std::int32_t inst = f[head++];
    if (head == f.size()) {
      f.clear();
      head = 0;
      fifo_mask_ &= ~(1u << p);
    }
    time = base_;
    return inst;
  }

 private:
  struct Item {
    SimTime time;
    std::uint64_t order;  // priority (3 bits), sequence (31), instance (30): EventQueue's low word
  };
  static constexpr int kBins = 64;  // times are >= 0: they differ from the base in bits 0-62

  // 1 + the highest bit where `time` differs from the base (time != base).
  int bin(SimTime time) const {
    return 64 - __builtin_clzll(static_cast<std::uint64_t>(time) ^ static_cast<std::uint64_t>(base_));
  }
  std::size_t earliest_past() const {
    std::size_t m = 0;
    for (std::size_t i = 1; i < past_.size(); ++i)
      if (std::tie(past_[i].time, past_[i].order) < std::tie(past_[m].time, past_[m].order)) m = i;
    return m;
  }

  // Bin 0 is empty: the lowest non-empty bin's earliest time becomes the base, that bin's
  // events at it go to bin 0 in (priority, sequence) order, the others to lower bins.
  void refill() {
    const int b = __builtin_ctzll(bin_mask_) + 1;
    std::vector<Item>& from = bins_[static_cast<std::size_t>(b)];
    SimTime m = from.front().time;
    for (const Item& it : from) m = std::min(m, it.time);
    base_ = m;
    sorted_.clear();
    for (const Item& it : from) {
      if (it.time == m) {
        sorted_.push_back(it.order);
      } else {
        const int nb = bin(it.time);
        bins_[static_cast<std::size_t>(nb)].push_back(it);
        bin_mask_ |= std::uint64_t{1} << (nb - 1);
      }
    }
    from.clear();
    bin_mask_ &= ~(std::uint64_t{1} << (b - 1));
    if (!std::is_sorted(sorted_.begin(), sorted_.end())) std::sort(sorted_.begin(), sorted_.end());
    for (const std::uint64_t o : sorted_) {
      const auto p = static_cast<std::size_t>(o >> (kSequenceBits + kIndexBits));
      fifo_[p].push_back(static_cast<std::int32_t>(o & ((std::uint64_t{1} << kIndexBits) - 1)));
      fifo_mask_ |= 1u << p;
    }
  }

  std::array<std::vector<Item>, kBins + 1> bins_;
  std::uint64_t bin_mask_ = 0;  // bit b - 1: bin b is not empty
  std::array<std::vector<std::int32_t>, 8> fifo_;  // bin 0, per priority: instances
  std::array<std::size_t, 8> head_{};
  unsigned fifo_mask_ = 0;  // bit p: fifo_[p] has events
  std::vector<std::uint64_t> sorted_;
  std::vector<Item> past_;
  SimTime base_ = 0;
  std::size_t size_ = 0;
  std::uint64_t sequence_ = 0;
};

constexpr SimTime kClockEnd = std::numeric_limits<SimTime>::max();  // 9.22e18 ps, 106.7 days

// A large array of a trivially destructible type in fresh anonymous memory, zero bytes until
// written. The full replay of 10^5 devices holds a few hundred MB of per-instance and
// per-device state; faulting it in 4 KiB pages was a tenth of the replay's time (issue 19's
// 131,072-device step: 135,000 page faults), so on Linux the mapping asks for transparent
// huge pages (MADV_HUGEPAGE: 2 MiB, 512 times fewer faults where the kernel grants them).
template <class T>
class BigArray {
  static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= 64);

 public:
  BigArray() = default;
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  ~BigArray() { release(); }
  // n elements, every byte zero (no constructor runs: T must take zero bytes as a value, or
  // be written before it is read).
  void allocate_zeroed(std::size_t n) { allocate(n, true); }
  // n elements, each written before it is read (mapped memory is zero anyway).
  void allocate_unset(std::size_t n) { allocate(n, false); }
  // n copies of `value`.
  void allocate_filled(std::size_t n, const T& value) {
    allocate(n, false);
    std::uninitialized_fill_n(data_, n, value);
  }
  explicit operator bool() const { return data_ != nullptr; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void allocate(std::size_t n, bool zero) {
    release();
    bytes_ = std::max<std::size_t>(1, n * sizeof(T));
#if defined(TRAINSIM_MMAP)
    if (bytes_ < kMapped) {  // the allocator's memory, reused from one replay to the next
      data_ = static_cast<T*>(::operator new(bytes_, std::align_val_t{64}));
      if (zero) std::memset(static_cast<void*>(data_), 0, bytes_);
      return;
    }
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: ignored if refused
#endif
    data_ = static_cast<T*>(p);
#else
    data_ = static_cast<T*>(::operator new(bytes_, std::align_val_t{64}));
    if (zero) std::memset(static_cast<void*>(data_), 0, bytes_);
#endif
  }
  void release() {
    if (data_ == nullptr) return;
#if defined(TRAINSIM_MMAP)
    if (bytes_ >= kMapped)
      munmap(data_, bytes_);
    else
      ::operator delete(data_, std::align_val_t{64});
#else
    ::operator delete(data_, std::align_val_t{64});
#endif
    data_ = nullptr;
  }
  // Arrays from this size on are mapped: glibc maps them anyway (its mmap threshold grows
  // to 32 MiB at most), and fresh pages fault in either way.
  static constexpr std::size_t kMapped = std::size_t{32} << 20;
  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// std::llround for a finite x >= 0, without the library call: below 2^62 the integer part
// is exact, and so is x - trunc(x) (Sterbenz), so ">= 0.5" rounds halves away from zero.
// Saturates at the clock's end: a time past it is never wrapped (the replay refuses a graph
// whose tasks could reach it, replay_time_bound_s).
SimTime round_ps(double x) {
  if (x < 4.0e18) {
    const auto i = static_cast<SimTime>(x);
    return x - static_cast<double>(i) >= 0.5 ? i + 1 : i;
  }
  return x < 0x1p63 ? std::llround(x) : kClockEnd;
}

// now + dur without signed overflow: past the clock's end the sum comes out negative, which
// the event loop reports as a step too long to represent (it never runs on with it).
SimTime later(SimTime now, SimTime dur) {
  return static_cast<SimTime>(static_cast<std::uint64_t>(now) + static_cast<std::uint64_t>(dur));
}

// A time earlier than the clock: either the step ran past the clock's end (an event time
// wrapped) or a real bug.
[[noreturn]] void time_went_back(SimTime time) {
  if (time < 0)
    throw ConfigError(Diagnostic({}, "replay",
                                 "the step runs past the end of the replay's clock (int64 picoseconds end at 106.7 days)",
                                 "a step under 106 days of simulated time"));
  throw SimError("replay: time went back");
}

// The largest of the factors, at least 1 (a speed factor s stretches a duration by 1 / s).
double max_stretch(const std::vector<double>& speeds) {
  double m = 1.0;
  for (double s : speeds)
    if (s > 0) m = std::max(m, 1.0 / s);
  return m;
}

// What the replay tracks per task instance: dependencies still pending (-1 once started),
// the next instance queued on the same stream. (When it started is kept apart, and only when
// something reads it: spans and collective waits.)
struct InstanceState {
  std::int32_t pending;
  std::int32_t next;
};

// The graph flattened for the hot loop, one cache line per task: the replay's misses are on
// the records of the tasks a finish makes ready, so everything ready() and start() read is
// on that line, including (one rank per stage) the instance's own state. No default values:
// the replay writes every field of every record once, `own` only in representative mode
// where it is read (an array of them is allocated without a first fill).
struct alignas(64) FlatTask {
  SimTime duration_ps;
  double memory_delta;
  double bytes;        // Task::bytes (read at every tiered finish: kept in the hot record)
  InstanceState own;   // one rank per stage: the state of the task's only instance
  std::int32_t stage;
  std::int32_t rendezvous;
  std::int32_t stream_base;  // stage * r * kQueueSlots + stream (the queue of rank 0 in queues_)
  std::int32_t succ_begin;   // successors: TaskGraph::successors[succ_begin, succ_end)
  std::int32_t succ_end;
  std::uint8_t stream;
  std::int8_t comm;  // comm kind index, -1 for compute
  bool collective;   // a rendezvous of more than one rank (full mode, group of > 1)
  std::int8_t tier;  // Task::tier for communication, -1 for compute
  bool shared;       // tier 1 with link sharing on: runs as a Flow
  SpanCategory category;
  RankGroup group;
  // A compute task on the host stream: kHostIssues (host time to issue) | kHostSync; a transfer
  // holding its share from its arrival (Task::share_from_arrival): kShareFromArrival.
  std::uint8_t flags;
  std::uint32_t share;  // a transfer's compute share, in 1/kShareUnits (0: compute, or free)
};
constexpr std::uint8_t kHostIssues = 1, kHostSync = 2, kShareFromArrival = 4;

// A device's in-order stream queues, one cache line: the first and last queued instance
// (-1: none) and whether the stream runs a task, for each of the kStreams streams. A stream's
// index (FlatTask::stream_base + rank * kQueueSlots) points at its head; its tail and busy
// flag are kTail and kBusy further on.
constexpr int kQueueSlots = 16;
constexpr int kHead = 0, kTail = kStreams, kBusy = 2 * kStreams;
struct alignas(64) StreamQueues {
  std::array<std::int32_t, kQueueSlots> slot = [] {
    std::array<std::int32_t, kQueueSlots> a{};
    for (int i = 0; i < 2 * kStreams; ++i) a[static_cast<std::size_t>(i)] = -1;  // no head, no tail; not busy
    return a;
  }();
};
static_assert(sizeof(StreamQueues) == 64 && 3 * kStreams <= kQueueSlots);
static_assert(sizeof(FlatTask) == 64);

// A device's replay state, three groups of cache lines. In full mode there are up to 10^5
// devices and consecutive events are on different ones, so each event's first read of its
// device misses the cache: what every event reads (whether a compute event is current, the
// interval's classification in touch()) is the first line, what transfers and memory
// changes add is the second, and the time accounts, one of which touch() adds to, follow.
struct alignas(64) DeviceState {
  // -- line 1 --
  SimTime last = 0;
  // Compute slowed by the transfers running beside it (only when some task has a share):
  // the running transfers' units, the compute instance running, when it ends at the present
  // rate (-1: stalled), and the earliest finish event queued for it (-1: none); its work
  // left is `work` below.
  SimTime compute_end = 0;
  SimTime event_at = -1;
  std::int64_t share = 0;
  std::int32_t compute_inst = -1;
  // The compute task waiting for its host to issue it (-1: none; the host stream below).
  std::int32_t host_wait = -1;
  std::array<std::int16_t, kNumCommKinds> active{};  // running transfers per kind (a few streams' worth)
  std::array<std::int16_t, 2> tier_active{};         // running DP/PP transfers per network tier
  std::uint8_t active_mask = 0;                      // bit k: active[k] > 0
  std::uint8_t tier_mask = 0;                        // bit k: tier_active[k] > 0
  std::int8_t compute_category = -1;
  // -- line 2 --
  __int128 work = 0;  // ps x kShareUnits, as of `work_at`
  SimTime work_at = 0;
  double memory = 0;
  // The host stream (Task::host_s): when the device's host has issued everything before the
  // next compute task.
  SimTime host_at = 0;
  // DeviceAccount's sums kept here, beside what the same events read (copied at the end).
  std::array<double, 2> tier_bytes_sent{};
  double collective_s = 0;
  // -- lines 3 to 5 --
  double collective_wait_s = 0;
  double peak_activation_bytes = 0;
  std::array<double, 2> tier_bytes_received{};  // with tier_busy_ps: a tier transfer's end adds to both
  // Where the device's time went, in exact picoseconds (DeviceAccount's seconds are these
  // over 1e12, converted once at the end: no division per event, no rounding per interval).
  std::array<SimTime, kNumCategories> compute_ps{};
  std::array<SimTime, kNumCommKinds> exposed_ps{};
  SimTime hidden_ps = 0, idle_ps = 0;
  std::array<SimTime, 2> tier_busy_ps{};

  void begin_tier(int k) {
    ++tier_active[static_cast<std::size_t>(k)];
    tier_mask = static_cast<std::uint8_t>(tier_mask | 1u << k);
  }
  void end_tier(int k) {
    if (--tier_active[static_cast<std::size_t>(k)] == 0) tier_mask = static_cast<std::uint8_t>(tier_mask & ~(1u << k));
  }
  void begin_comm(int k) {
    ++active[static_cast<std::size_t>(k)];
    active_mask = static_cast<std::uint8_t>(active_mask | 1u << k);
  }
  void end_comm(int k) {
    if (--active[static_cast<std::size_t>(k)] == 0) active_mask = static_cast<std::uint8_t>(active_mask & ~(1u << k));
  }
};
static_assert(offsetof(DeviceState, work) == 64 && offsetof(DeviceState, collective_wait_s) == 128);

// Full: every rank of a stage (instance = task * r + rank); else one rank per stage
// (instance = task), which lets the hot loop drop the rank arithmetic.
// Queue: EventQueue<Full> (one rank per stage, or every rank in lockstep: its FIFO buckets
// take a stage's ranks in one heap entry) or RadixQueue (every rank at its own speed: few
// events share a time). Both take events in the same order.
template <bool Full, class Queue>
class Replayer {
 public:
  // merge: ranks of a TP group replayed as one device (tp_lockstep.hpp); 1 in representative mode.
  Replayer(const TaskGraph& g, const ReplayOptions& o, int merge) : g_(g), opt_(o), merge_(merge) {
    n_ = g.num_tasks();
    rfull_ = std::max(1, g.ranks_per_stage);
    r_ = o.full ? rfull_ / merge_ : 1;
    devices_ = g.stages * r_;
    instances_ = static_cast<std::int64_t>(n_) * r_;
    static_assert(kMaxTaskInstances <= kMaxInstances);
    if (instances_ > kMaxTaskInstances)
      throw ConfigError(Diagnostic({}, "replay",
                                   std::to_string(instances_) + " task instances, more than a replay takes (" +
                                       std::to_string(kMaxTaskInstances) + ")",
                                   "fewer tasks or ranks"));

    // Rank groups per (kind, rank in stage); a task whose group has more than one rank is a
    // rendezvous.
    groups_.resize(static_cast<std::size_t>(kNumGroupKinds) * r_);
    for (int k = 0; k < kNumGroupKinds; ++k)
      for (int r = 0; r < r_; ++r) {
        GroupSlice& gs = groups_[static_cast<std::size_t>(k) * r_ + r];
        group_of(static_cast<RankGroup>(k), r, gs.first, gs.stride, gs.count);
      }

    // One pass over the tasks: the hot records, the pending dependency counts, the tasks
    // ready at the start. Successors and in-degrees are the graph's.
    tasks_.reset(new FlatTask[static_cast<std::size_t>(n_)]);
    if (n_ > 0 && (g.successor_begin.size() != static_cast<std::size_t>(n_) + 1 ||
                   g.in_degree.size() != static_cast<std::size_t>(n_)))
      throw SimError("replay: the graph's dependencies do not match its tasks");
    succ_ = g.successors.data();
    num_succ_ = g.num_edges();
    const auto inst = static_cast<std::size_t>(instances_);
    // Written before they are read (pending here, next when an instance is queued, arrival
    // when it starts): no initial fill.
    if constexpr (Full) states_.allocate_unset(inst);
    if (Full || o.record_spans) arrival_.allocate_unset(inst);
    initial_.reset(new std::int32_t[static_cast<std::size_t>(n_)]);
    const std::int32_t* indeg = g.in_degree.data();
    if (!(g.host_lead_s >= 0 && g.host_lead_s <= 1.0))
      throw SimError("replay: the host's lead per task must be in [0, 1] s");
    host_lead_ps_ = round_ps(g.host_lead_s * kPsPerS);
    bool any_shared = false;
    double compute_s = 0, comm_s = 0;  // replay_time_bound_s's sums, taken on the way
    for (int t = 0; t < n_; ++t) {
      const Task& task = g.task(t);
      FlatTask& f = tasks_[static_cast<std::size_t>(t)];
      if (!(task.duration_s >= 0 && task.duration_s <= std::numeric_limits<double>::max()))
        throw SimError("replay: task " + std::to_string(t) + " has a negative or non-finite duration");
      f.duration_ps = round_ps(task.duration_s * kPsPerS);
      f.memory_delta = task.memory_delta_bytes;
      f.bytes = task.bytes;
      f.stage = task.stage;
      f.rendezvous = task.rendezvous;
      f.stream = static_cast<std::uint8_t>(task.stream);
      f.category = task.category;
      f.group = task.group;
      f.comm = kCommKind[static_cast<std::size_t>(task.category)];
      f.collective = false;
      f.tier = -1;
      f.shared = false;
      f.share = 0;
      f.flags = 0;
      if (f.comm >= 0) {
        if (!(task.compute_share >= 0 && task.compute_share <= 1))
          throw SimError("replay: task " + std::to_string(t) + " has a compute share outside [0, 1]");
        f.share = static_cast<std::uint32_t>(std::llround(task.compute_share * kShareUnits));
        interference_ = interference_ || f.share > 0;
        if (f.share > 0 && task.share_from_arrival) f.flags = kShareFromArrival;
        f.collective = Full && group(f.group, 0).count > 1;
        f.tier = task.tier;
        f.shared = f.tier == 1 && o.share_links;
        any_shared = any_shared || f.shared;
        comm_s += f.shared ? task.duration_s * kMaxFlowsPerLink : task.duration_s;
      } else {
        compute_s += task.duration_s;
        if (!(task.host_s >= 0 && task.host_s <= std::numeric_limits<double>::max()))
          throw SimError("replay: task " + std::to_string(t) + " has a negative or non-finite host time");
        f.flags = static_cast<std::uint8_t>((task.host_s > 0 ? kHostIssues : 0) | (task.host_sync ? kHostSync : 0));
        if (f.flags != 0) {
          // The host stream's waits: at most its issue time and one lead a task.
          compute_s += task.host_s + g.host_lead_s;
          if (!host_) {
            host_ = true;
            host_ps_.reset(new SimTime[static_cast<std::size_t>(n_)]());
          }
          host_ps_[static_cast<std::size_t>(t)] = round_ps(task.host_s * kPsPerS);
        }
      }
      f.stream_base = (Full ? f.stage * r_ : f.stage) * kQueueSlots + f.stream;
      f.succ_begin = g.successor_begin[static_cast<std::size_t>(t)];
      f.succ_end = g.successor_begin[static_cast<std::size_t>(t) + 1];
      const std::int32_t d = indeg[t];
      if (d == 0) initial_[static_cast<std::size_t>(num_initial_++)] = t;
      if constexpr (Full) {
        for (int r = 0; r < r_; ++r) states_[static_cast<std::size_t>(t) * r_ + r].pending = d;
      } else {
        f.own.pending = d;
      }
    }

    if (any_shared) {
      link_flows_.allocate_zeroed(static_cast<std::size_t>(devices_) * 2);  // no flows, never searched
    }
    if (r_ > 1) collective_count_.allocate_zeroed(inst);  // only multi-rank collectives count arrivals
    p2p_count_.allocate_zeroed(g.rendezvous.size() * static_cast<std::size_t>(r_));
    queues_.allocate_filled(static_cast<std::size_t>(devices_), StreamQueues{});
    dev_.allocate_filled(static_cast<std::size_t>(devices_), DeviceState{});
    inv_speed_.assign(static_cast<std::size_t>(devices_), 1.0);
    if (!o.device_speed.empty()) {  // full: per rank; representative: per stage
      if (static_cast<int>(o.device_speed.size()) != devices_)
        throw SimError("replay: device_speed has " + std::to_string(o.device_speed.size()) + " entries for " +
                       std::to_string(devices_) + " devices");
      for (int d = 0; d < devices_; ++d) {
        const double s = o.device_speed[static_cast<std::size_t>(d)];
        if (!(s > 0)) throw SimError("replay: device speed must be positive");
        inv_speed_[static_cast<std::size_t>(d)] = 1.0 / s;
        if (s != 1.0) slow_devices_ = true;
      }
    }
    inv_link_.assign(static_cast<std::size_t>(devices_), 1.0);
    if (o.full && !o.link_speed.empty()) {
      if (static_cast<int>(o.link_speed.size()) != devices_)
        throw SimError("replay: link_speed has " + std::to_string(o.link_speed.size()) + " entries for " +
                       std::to_string(devices_) + " devices");
      for (int d = 0; d < devices_; ++d) {
        const double s = o.link_speed[static_cast<std::size_t>(d)];
        if (!(s > 0)) throw SimError("replay: link speed must be positive");
        inv_link_[static_cast<std::size_t>(d)] = 1.0 / s;
        if (s != 1.0) slow_links_ = true;
      }
    }
    // The step's bound (replay_time_bound_s) within the clock; each duration is rounded to a
    // whole picosecond, half a picosecond more per task at most.
    const double bound_s = Full ? compute_s * max_stretch(o.device_speed) + comm_s * max_stretch(o.link_speed)
                                : compute_s * max_stretch(o.device_speed) + comm_s;
    if (!(bound_s * kPsPerS + 0.5 * static_cast<double>(n_) < static_cast<double>(kClockEnd)))
      throw ConfigError(Diagnostic({}, "replay",
                                   "the tasks' durations add up to " + std::to_string(bound_s / 86400.0) +
                                       " days, past the end of the replay's clock (int64 picoseconds: 106.7 days)",
                                   "a step under 106 days of simulated time"));
    out_.devices.resize(static_cast<std::size_t>(devices_));
    for (int d = 0; d < devices_; ++d) {
      auto& a = out_.devices[static_cast<std::size_t>(d)];
      a.stage = d / r_;
      a.device = global_rank(d);
    }
    heap_.reserve(static_cast<std::size_t>(devices_) * kStreams * 2 + 16);
    record_spans_ = opt_.record_spans;
    if (record_spans_) {
      out_.timeline.spans.reserve(inst);
      out_.timeline.flows.reserve(g.rendezvous.size() * static_cast<std::size_t>(r_));
      std::size_t mem = 0;
      for (const Task& task : g.tasks) mem += task.memory_delta_bytes != 0 ? 1 : 0;
      out_.timeline.memory.reserve(mem * static_cast<std::size_t>(r_));
    }
  }

  ReplayResult run() {
    for (int i = 0; i < num_initial_; ++i)
      for (int r = 0; r < r_; ++r) ready(initial_[static_cast<std::size_t>(i)] * r_ + r);
    for (;;) {
      // Flows that started or lost a neighbour are refilled once the clock is about to move:
      // ranks in lockstep start and end their flows at one time, and one filling serves them
      // all. Rates only matter once time passes, so this is exact (a flow due now keeps its
      // finish event: reshare).
      if (!dirty_.empty() && (heap_.empty() || heap_.top().first > now_) &&
          (flow_events_.empty() || flow_events_.top().time > now_)) {
        reshare(dirty_);
        dirty_.clear();
      }
      if (!flow_events_.empty()) {
        const FlowEvent& fe = flow_events_.top();
        if (heap_.empty() || std::make_pair(fe.time, fe.priority) < heap_.top()) {
          const FlowEvent e = fe;
          flow_events_.pop();
          const Flow& fl = flows_[static_cast<std::size_t>(e.flow)];
          if (!fl.active || fl.version != e.version) continue;  // stale: the flow was re-shared
          if (e.time < now_) time_went_back(e.time);
          now_ = e.time;
          ++out_.events;
          end_flow(e.flow);
          continue;
        }
      }
      if (heap_.empty()) break;
      SimTime time = 0;
      const std::int32_t inst = heap_.pop(time);
      if (host_waiting_ != 0 && host_woke(inst, time)) continue;  // a compute task's host has issued it
      if (interference_ && !compute_done(inst, time)) continue;  // a compute finish moved by a share change
      if (time < now_) time_went_back(time);
      now_ = time;
      ++out_.events;
      finish(inst);
    }
    check_end();
    fill_span_labels();
    for (int d = 0; d < devices_; ++d) touch(d);
    fill_time_accounts();
    out_.end = now_;
    out_.timeline.end = now_;
    return std::move(out_);
  }

 private:
  int global_rank(int d) const {
    if constexpr (Full) return (d / r_) * rfull_ + (d % r_) * merge_;
    return d * rfull_;
  }
  // Instance -> (task, rank in stage); no division in representative mode.
  int task_of(std::int32_t inst) const {
    if constexpr (Full) return inst / r_;
    return inst;
  }
  int rank_of(std::int32_t inst) const {
    if constexpr (Full) return inst % r_;
    return 0;
  }
  InstanceState& state(std::int32_t inst) {
    if constexpr (Full) return states_[static_cast<std::size_t>(inst)];
    return tasks_[static_cast<std::size_t>(inst)].own;
  }
  int device_of(std::int32_t inst) const {
    return tasks_[static_cast<std::size_t>(task_of(inst))].stage * r_ + rank_of(inst);
  }
  std::size_t stream_of(std::int32_t inst) const {
    return static_cast<std::size_t>(tasks_[static_cast<std::size_t>(task_of(inst))].stream_base +
                                    rank_of(inst) * kQueueSlots);
  }
  // The head slot of stream queue s (stream_of); its tail and busy flag follow (kTail, kBusy).
  std::int32_t* queue(std::size_t s) {
    return &queues_[s / kQueueSlots].slot[s % kQueueSlots];
  }

  // Accumulates the time since the device's last change into its account.
  [[gnu::always_inline]] void touch(int d) {
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    const SimTime dt = now_ - s.last;
    if (dt <= 0) return;
    s.last = now_;
    const int comm = s.active_mask != 0 ? __builtin_ctz(s.active_mask) : -1;  // first active kind
    if (s.compute_category >= 0) {
      s.compute_ps[static_cast<std::size_t>(s.compute_category)] += dt;
      if (comm >= 0) s.hidden_ps += dt;
    } else if (comm >= 0) {
      s.exposed_ps[static_cast<std::size_t>(comm)] += dt;
    } else {
      s.idle_ps += dt;
    }
    if (s.tier_mask != 0) {
      if (s.tier_mask & 1u) s.tier_busy_ps[0] += dt;
      if (s.tier_mask & 2u) s.tier_busy_ps[1] += dt;
    }
  }

  // The accounts' time shares, from the exact picosecond sums.
  void fill_time_accounts() {
    for (int d = 0; d < devices_; ++d) {
      const DeviceState& s = dev_[static_cast<std::size_t>(d)];
      auto& a = out_.devices[static_cast<std::size_t>(d)];
      for (std::size_t k = 0; k < s.compute_ps.size(); ++k) a.compute_s[k] = static_cast<double>(s.compute_ps[k]) / kPsPerS;
      for (std::size_t k = 0; k < s.exposed_ps.size(); ++k)
        a.exposed_comm_s[k] = static_cast<double>(s.exposed_ps[k]) / kPsPerS;
      a.hidden_comm_s = static_cast<double>(s.hidden_ps) / kPsPerS;
      a.idle_s = static_cast<double>(s.idle_ps) / kPsPerS;
      for (std::size_t k = 0; k < 2; ++k) a.tier_busy_s[k] = static_cast<double>(s.tier_busy_ps[k]) / kPsPerS;
      a.tier_bytes_sent = s.tier_bytes_sent;
      a.tier_bytes_received = s.tier_bytes_received;
      a.collective_s = s.collective_s;
      a.collective_wait_s = s.collective_wait_s;
      a.peak_activation_bytes = s.peak_activation_bytes;
    }
  }

  void ready(std::int32_t inst) {
    const std::size_t s = stream_of(inst);
    state(inst).next = -1;
    std::int32_t* q = queue(s);
    if (q[kTail] < 0) {
      q[kHead] = inst;
    } else {
      state(q[kTail]).next = inst;
    }
    q[kTail] = inst;
    if (!q[kBusy]) start_next(s);
  }

  // Inlined: most calls find the stream's queue empty, and should not pay for a call frame.
  [[gnu::always_inline]] void start_next(std::size_t s) {
    std::int32_t* q = queue(s);
    const std::int32_t inst = q[kHead];
    if (inst < 0) return;
    q[kHead] = state(inst).next;
    if (q[kHead] < 0) q[kTail] = -1;
    q[kBusy] = 1;
    start(inst);
  }

  void push(SimTime t, std::int32_t inst) {
    heap_.push(t, tasks_[static_cast<std::size_t>(task_of(inst))].stream, inst);
  }

  struct GroupSlice {
    int first = 0, stride = 1, count = 1;
  };
  static constexpr int kNumGroupKinds = 6;  // RankGroup values
  const GroupSlice& group(RankGroup kind, int r) const { return groups_[static_cast<std::size_t>(kind) * r_ + r]; }

  // Members of the rank group of `kind` that rank r belongs to: first, stride, count.
  void group_of(RankGroup kind, int r, int& first, int& stride, int& count) const {
    first = r;
    stride = 1;
    count = 1;
    if (r_ == 1) return;
    const int tp = g_.tp / merge_, cp = g_.cp, ep = std::max(1, g_.ep);
    const int tp_i = r % tp, cp_i = (r / tp) % cp, dp_i = r / (tp * cp);
    switch (kind) {
      case RankGroup::tp:
        first = r - tp_i;
        stride = 1;
        count = tp;
        break;
      case RankGroup::cp:
        first = r - cp_i * tp;
        stride = tp;
        count = cp;
        break;
      case RankGroup::ep:
        first = r - (dp_i % ep) * tp * cp;
        stride = tp * cp;
        count = ep;
        break;
      case RankGroup::dp:
        first = tp_i;
        stride = tp;
        count = cp * g_.dp;
        break;
      default:
        break;
    }
  }

  [[gnu::noinline]] void start(std::int32_t inst) {
    InstanceState& is = state(inst);
    if (is.pending != 0) throw SimError("replay: a task started before its dependencies were done");
    is.pending = -1;
    if (arrival_) arrival_[static_cast<std::size_t>(inst)] = now_;
    const int t = task_of(inst);
    const int r = rank_of(inst);
    const FlatTask& f = tasks_[static_cast<std::size_t>(t)];
    const int d = device_of(inst);
    if constexpr (!Full) {
      // The records finish() reads when this task ends, fetched while it runs. (In full mode
      // the ranks of a stage run in lockstep: the first rank's misses serve the others.)
      for (std::int32_t k = f.succ_begin; k < f.succ_end; ++k)
        __builtin_prefetch(&tasks_[static_cast<std::size_t>(succ_[k])], 1);
      // A stage's tasks run roughly in id order: the records a few items ahead, and their
      // successor lists.
      if (t + kPrefetchAhead < n_) __builtin_prefetch(&tasks_[static_cast<std::size_t>(t + kPrefetchAhead)], 1);
      if (f.succ_end + 16 < num_succ_) __builtin_prefetch(succ_ + f.succ_end + 16);
    }
    if (f.memory_delta > 0) add_memory(d, f.memory_delta);
    if (f.flags == kShareFromArrival) change_share(d, f.share);  // a transfer held from its arrival
    if (f.rendezvous >= 0) {
      const std::size_t key = static_cast<std::size_t>(f.rendezvous) * r_ + r;
      if (++p2p_count_[key] == 2) {
        const auto& members = g_.rendezvous[static_cast<std::size_t>(f.rendezvous)];
        complete_p2p(members, r);
      }
      return;
    }
    if (f.collective) {
      const GroupSlice& gs = group(f.group, r);
      const std::size_t key = static_cast<std::size_t>(t) * r_ + gs.first;
      if (++collective_count_[key] == gs.count) complete_collective(t, gs.first, gs.stride, gs.count);
      return;
    }
    touch(d);
    SimTime dur = f.duration_ps;
    if (f.comm < 0) {
      if (slow_devices_ && inv_speed_[static_cast<std::size_t>(d)] != 1.0)
        dur = round_ps(g_.task(t).duration_s * kPsPerS * inv_speed_[static_cast<std::size_t>(d)]);
      if (f.flags != 0 && wait_for_host(d, inst, t, f.flags, dur)) return;
      run_compute(d, inst, f, dur);
      return;
    } else {
      // A transfer of one rank (begin_transfer's work, inline: this is the hot path).
      dur = scaled(t, inv_link_[static_cast<std::size_t>(d)]);
      dev_[static_cast<std::size_t>(d)].begin_comm(f.comm);
      if (f.tier >= 0) dev_[static_cast<std::size_t>(d)].begin_tier(f.tier);
      if (f.share > 0 && f.flags != kShareFromArrival) change_share(d, f.share);
      // Time held by a collective (a shared flow's is known when it ends).
      if (f.comm != 3 && !f.shared)
        dev_[static_cast<std::size_t>(d)].collective_s += static_cast<double>(dur) / kPsPerS;
      if (f.shared) {
        start_flow(&inst, 1, dur);
        return;
      }
    }
    push(later(now_, dur), inst);
  }

  // A compute task runs on its device from now (dur: at the device's speed).
  [[gnu::always_inline]] void run_compute(int d, std::int32_t inst, const FlatTask& f, SimTime dur) {
    dev_[static_cast<std::size_t>(d)].compute_category = static_cast<std::int8_t>(f.category);
    if (interference_) {
      begin_compute(d, inst, dur);
      return;
    }
    push(later(now_, dur), inst);
  }

  // --- The host stream (issue 15) ---
  // Each device's host issues its compute tasks' kernels in the compute stream's order, ahead
  // of the device: task k is issued from max(when the host issued task k-1, and, at a
  // synchronization (Task::host_sync), when the device reached task k), for Task::host_s. The
  // device cannot start a task before the host's first kernel of it (one lead, capped at the
  // task's host time) nor end it before the host's last: it starts at max(now, issue + lead,
  // issue end - the task's duration), idle meanwhile (counted as host time). The host's time
  // is spread evenly over the task's kernels only as far as these two bounds say.
  // Returns whether the task waits: its start queued as an event (found by host_woke) where
  // transfers re-time compute, else its end queued past the wait in one event.
  [[gnu::noinline]] bool wait_for_host(int d, std::int32_t inst, int t, std::uint8_t flags, SimTime dur) {
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    const SimTime h = host_ps_[static_cast<std::size_t>(t)];
    const SimTime issue = (flags & kHostSync) ? std::max(s.host_at, now_) : s.host_at;
    s.host_at = later(issue, h);
    if (h == 0) return false;
    const SimTime begin = std::max({now_, later(issue, std::min(host_lead_ps_, h)), s.host_at - dur});
    if (begin <= now_) return false;
    if (!interference_) {
      // Nothing re-times compute on this replay: the wait and the task are one event, the
      // wait's time moved from the task's category to the host's in the account now (touch
      // adds the whole interval to the task's category when it ends).
      const SimTime wait = begin - now_;
      s.compute_ps[static_cast<std::size_t>(SpanCategory::host)] += wait;
      s.compute_ps[static_cast<std::size_t>(tasks_[static_cast<std::size_t>(t)].category)] -= wait;
      if (record_spans_) {
        record_span_now(inst, now_, begin, SpanCategory::host);
        arrival_[static_cast<std::size_t>(inst)] = begin;
      }
      s.compute_category = static_cast<std::int8_t>(tasks_[static_cast<std::size_t>(t)].category);
      push(later(begin, dur), inst);
      return true;
    }
    s.host_wait = inst;
    s.compute_category = static_cast<std::int8_t>(SpanCategory::host);
    ++host_waiting_;
    push(begin, inst);
    return true;
  }
  // Whether a popped event is the end of a compute task's wait for its host: then the task
  // starts on the device.
  bool host_woke(std::int32_t inst, SimTime time) {
    const int t = task_of(inst);
    const FlatTask& f = tasks_[static_cast<std::size_t>(t)];
    if (f.comm >= 0 || f.flags == 0) return false;
    const int d = device_of(inst);
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    if (s.host_wait != inst) return false;
    if (time < now_) time_went_back(time);
    now_ = time;
    ++out_.events;
    s.host_wait = -1;
    --host_waiting_;
    touch(d);
    if (record_spans_) {
      record_span_now(inst, arrival_[static_cast<std::size_t>(inst)], now_, SpanCategory::host);
      arrival_[static_cast<std::size_t>(inst)] = now_;
    }
    SimTime dur = f.duration_ps;
    if (slow_devices_ && inv_speed_[static_cast<std::size_t>(d)] != 1.0)
      dur = round_ps(g_.task(t).duration_s * kPsPerS * inv_speed_[static_cast<std::size_t>(d)]);
    run_compute(d, inst, f, dur);
    return true;
  }

  // A transfer runs at the pace of its slowest link (ReplayOptions::link_speed).
  SimTime scaled(int t, double inv) const {
    return inv == 1.0 ? tasks_[static_cast<std::size_t>(t)].duration_ps
                      : round_ps(g_.task(t).duration_s * kPsPerS * inv);
  }

  void begin_transfer(std::int32_t inst, SimTime dur) {
    const FlatTask& f = tasks_[static_cast<std::size_t>(task_of(inst))];
    const int d = device_of(inst);
    touch(d);
    dev_[static_cast<std::size_t>(d)].begin_comm(f.comm);
    if (f.tier >= 0) dev_[static_cast<std::size_t>(d)].begin_tier(f.tier);
    if (f.share > 0 && f.flags != kShareFromArrival) change_share(d, f.share);
    if (!f.shared) push(later(now_, dur), inst);
  }

  // --- Compute slowed by transfers (Task::compute_share) ---
  // A transfer holding a share of its device's compute units (NCCL's CTAs each take an SM)
  // slows the compute running beside it to (1 - the held shares) of its speed: the
  // compute task's remaining work is re-timed whenever a share is taken or given back on its
  // device. Exact integers (kShareUnits), so both replay modes agree to the picosecond.
  // A rendezvous member holds its share from the transfer's start, or, for the p2p transfers
  // whose arrival is where the code issues them (Task::share_from_arrival), from its arrival:
  // there its NCCL kernel is resident. PyTorch's ProcessGroupNCCL (pointToPoint and
  // collective(): syncStream) makes the NCCL stream wait on the compute stream at issue, so
  // the kernel starts as soon as its stream reaches it (the replay's arrival), and spins
  // inside the kernel until its peer posts the matching operation: an ncclSend waiting for
  // its ncclRecv runs the whole time and can slow a GEMM beside it (NVIDIA/nccl#1025), its
  // CTAs, one SM each, shared with no compute kernel (NVIDIA/nccl#689); the zero-bubble fork's
  // runtime notes say the same of waiting communication kernels (docs/zero-bubble/
  // pipeline_parallel_runtime.md @ 39f2c186, 'Pre-communication Optimization'). Where the
  // graph posts a transfer ahead of its issue, its arrival is no kernel launch: p2p on their
  // own streams (P2pExchange::streams, a receive queued from the step's start) and collectives
  // (the same kernels behind the same syncStream, but some posted ahead: ZeRO-3's gathers from
  // the step's start). Held from arrival, those slow the compute by whole waits no kernel
  // spent (tried 2026-12-01 for p2p on their own streams: the zero-bubble runtime's rows
  // 15-20% slow, Megatron 2021-22's 1-2%), so they keep the share from the transfer's start.
  // A collective's member waits only on uneven ranks in full mode anyway.
  [[gnu::noinline]] void begin_compute(int d, std::int32_t inst, SimTime dur) {
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    s.compute_inst = inst;
    s.work = static_cast<__int128>(dur) * kShareUnits;
    s.work_at = now_;
    s.event_at = -1;
    schedule_compute(s);
  }
  static std::int64_t compute_rate(const DeviceState& s) { return kShareUnits - std::min(s.share, kShareUnits); }
  // The finish is queued only when it moves earlier than the queued event: an end moved later
  // is found when the earlier event pops (compute_done), which then queues it. A transfer that
  // starts and ends within one compute task costs one event, not two.
  void schedule_compute(DeviceState& s) {
    const std::int64_t rate = compute_rate(s);
    if (rate <= 0) {  // every unit taken: the compute waits for a transfer to end
      s.compute_end = -1;
      return;
    }
    const __int128 dt = s.work > 0 ? (s.work + rate - 1) / rate : 0;
    s.compute_end = later(now_, static_cast<SimTime>(std::min<__int128>(dt, kClockEnd)));
    if (s.event_at < 0 || s.compute_end < s.event_at) {
      s.event_at = s.compute_end;
      push(s.compute_end, s.compute_inst);
    }
  }
  [[gnu::noinline]] void change_share(int d, std::int64_t delta) {
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    if (s.compute_inst >= 0) {
      s.work -= static_cast<__int128>(now_ - s.work_at) * compute_rate(s);
      s.work_at = now_;
    }
    s.share += delta;
    if (s.compute_inst >= 0) schedule_compute(s);
  }
  // Whether a popped event ends its task: transfers always; a compute task when it is the
  // device's running one and its end is now. An early event (the end moved later) queues the
  // present end; events of a finished task or already requeued ones are dropped.
  bool compute_done(std::int32_t inst, SimTime time) {
    if (tasks_[static_cast<std::size_t>(task_of(inst))].comm >= 0) return true;
    DeviceState& s = dev_[static_cast<std::size_t>(device_of(inst))];
    if (s.compute_inst != inst) return false;
    if (s.compute_end == time) return true;
    if (time == s.event_at) {
      s.event_at = -1;
      if (s.compute_end >= 0) {
        s.event_at = s.compute_end;
        push(s.compute_end, inst);
      }
    }
    return false;
  }

  void complete_collective(int t, int first, int stride, int count) {
    double inv = 1.0;
    for (int j = 0; j < count && slow_links_; ++j)
      inv = std::max(inv, inv_link_[static_cast<std::size_t>(device_of(t * r_ + first + j * stride))]);
    const SimTime dur = scaled(t, inv);
    const bool shared = tasks_[static_cast<std::size_t>(t)].shared;
    for (int j = 0; j < count; ++j) {
      const std::int32_t inst = t * r_ + first + j * stride;
      const int d = device_of(inst);
      DeviceState& a = dev_[static_cast<std::size_t>(d)];
      const double wait = static_cast<double>(now_ - arrival_[static_cast<std::size_t>(inst)]) / kPsPerS;
      a.collective_wait_s += wait;
      a.collective_s += wait + (shared ? 0.0 : static_cast<double>(dur) / kPsPerS);
      begin_transfer(inst, dur);
      if (!shared) record_span(inst, now_, later(now_, dur));
    }
    if (shared) {
      members_.clear();
      for (int j = 0; j < count; ++j) members_.push_back(t * r_ + first + j * stride);
      start_flow(members_.data(), count, dur);
    }
  }

  void complete_p2p(const std::array<int, 2>& members, int r) {
    int first_span = -1;
    double inv = 1.0;
    if (slow_links_)
      for (int m : members) inv = std::max(inv, inv_link_[static_cast<std::size_t>(device_of(m * r_ + r))]);
    if (tasks_[static_cast<std::size_t>(members[0])].shared) {
      const std::int32_t insts[2] = {members[0] * r_ + r, members[1] * r_ + r};
      const SimTime dur = scaled(members[0], inv);
      for (std::int32_t inst : insts) begin_transfer(inst, dur);
      start_flow(insts, 2, dur);
      return;
    }
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::int32_t inst = members[k] * r_ + r;
      const SimTime dur = scaled(members[k], inv);
      begin_transfer(inst, dur);
      const int span = record_span(inst, now_, later(now_, dur));
      if (k == 0)
        first_span = span;
      else if (span >= 0)
        out_.timeline.flows.emplace_back(first_span, span);
    }
  }

  // The graph's labels of each span, in one pass after the run: these reads do not wait on
  // one another, unlike inside the event loop.
  void fill_span_labels() {
    for (Span& s : out_.timeline.spans) {
      const Task& task = g_.task(s.task);
      s.microbatch = task.microbatch;
      s.chunk = task.chunk;
      s.work = task.work;
    }
  }

  int record_span(std::int32_t inst, SimTime start, SimTime end) {
    if (!record_spans_) return -1;
    return record_span_now(inst, start, end);
  }
  int record_span_now(std::int32_t inst, SimTime start, SimTime end) {
    return record_span_now(inst, start, end, tasks_[static_cast<std::size_t>(task_of(inst))].category);
  }
  int record_span_now(std::int32_t inst, SimTime start, SimTime end, SpanCategory category) {
    const int t = task_of(inst);
    const FlatTask& f = tasks_[static_cast<std::size_t>(t)];
    Span s;
    s.device = global_rank(device_of(inst));
    s.stream = static_cast<Stream>(f.stream);
    s.category = category;
    s.start = start;
    s.end = end;
    s.task = t;  // micro-batch, chunk and pass are filled in after the run (fill_span_labels)
    out_.timeline.spans.push_back(std::move(s));
    return static_cast<int>(out_.timeline.spans.size()) - 1;
  }

  void add_memory(int d, double delta) {
    DeviceState& s = dev_[static_cast<std::size_t>(d)];
    s.memory += delta;
    // Frees are computed from the same doubles as allocations; allow rounding dust.
    if (s.memory < -1.0) throw SimError("replay: memory went negative on device " + std::to_string(global_rank(d)));
    if (s.memory < 0) s.memory = 0;
    s.peak_activation_bytes = std::max(s.peak_activation_bytes, s.memory);
    if (record_spans_) out_.timeline.memory.push_back(MemorySample{global_rank(d), now_, s.memory});
  }

  [[gnu::always_inline]] void finish(std::int32_t inst) {
    const int t = task_of(inst);
    const int r = rank_of(inst);
    const FlatTask& f = tasks_[static_cast<std::size_t>(t)];
    const int d = device_of(inst);
    touch(d);
    auto& st = dev_[static_cast<std::size_t>(d)];
    if (f.comm < 0) {
      st.compute_category = -1;
      st.compute_inst = -1;
    } else {
      if (f.share > 0) change_share(d, -static_cast<std::int64_t>(f.share));
      st.end_comm(f.comm);
      if (f.tier >= 0) {
        st.end_tier(f.tier);
        // The directions the transfer's flow takes (the NIC links of start_flow): a send only
        // sends, a receive only receives, a collective does both.
        const auto k = static_cast<std::size_t>(f.tier);
        if (f.stream != static_cast<std::uint8_t>(Stream::pp_recv)) st.tier_bytes_sent[k] += f.bytes;
        if (f.stream != static_cast<std::uint8_t>(Stream::pp_send)) st.tier_bytes_received[k] += f.bytes;
      }
    }
    const bool rendezvous_span = f.rendezvous >= 0 || f.collective;
    if (!rendezvous_span && record_spans_) record_span_now(inst, arrival_[static_cast<std::size_t>(inst)], now_);
    if (f.memory_delta < 0) add_memory(d, f.memory_delta);
    ++out_.tasks_run;
    const std::size_t s = stream_of(inst);
    queue(s)[kBusy] = 0;
    start_next(s);
    for (std::int32_t k = f.succ_begin; k < f.succ_end; ++k) {
      const std::int32_t u = Full ? succ_[k] * r_ + r : succ_[k];
      if (--state(u).pending == 0) ready(u);
    }
  }

  // --- Flows sharing NIC links (ReplayOptions::share_links) ---
  // Max-min fair (max_min_fill, link_sharing.hpp): a flow runs at the rate progressive filling
  // gives it over the links it uses, each link carrying one flow at its stand-alone rate. Work
  // and rates are exact integers: stand-alone picoseconds x kWorkUnits, a rate in units per
  // picosecond (kWorkUnits alone, kWorkUnits / n for n equal flows on one link, n <= 16), so
  // the result does not depend on how often progress is taken (representative and full mode
  // agree) nor on the order flows are visited. When a flow starts or ends, the flows that
  // can change rate are those connected to it through shared links (a flow held back on one
  // link leaves the rest of another to its neighbours there): that component is refilled.
  static constexpr std::int64_t kWorkUnits = 720720;  // lcm(1..16)
  static constexpr int kMaxShare = kMaxFlowsPerLink;

  struct Flow {
    std::vector<std::int32_t> insts;  // member task instances, finished together
    std::vector<std::int32_t> links;  // device * 2 + (0 send, 1 receive)
    __int128 remaining = 0;           // work units left
    SimTime last = 0;                 // when `remaining` was last brought up to date
    SimTime start = 0;
    std::int64_t rate = 0;       // work units per picosecond (0: not filled yet)
    std::uint32_t version = 0;   // bumped at every reschedule; older finish events are stale
    std::uint32_t priority = 7;  // of its finish events: its members' lowest stream
    std::uint32_t stamp = 0;     // the component search that last reached it
    bool active = false;
  };
  struct FlowEvent {
    SimTime time;
    std::uint32_t priority;
    std::uint64_t sequence;
    std::int32_t flow;
    std::uint32_t version;
    bool operator>(const FlowEvent& o) const {
      return std::tie(time, priority, sequence) > std::tie(o.time, o.priority, o.sequence);
    }
  };

  // A NIC link's active flows, in the order they joined, with reshare()'s marks, in place:
  // a link is read at every flow's start and end, and a list behind a pointer cost a second
  // miss each time. The first line holds 13 flows; more than kMaxShare is refused.
  struct alignas(64) LinkFlows {
    std::int32_t n = 0;
    std::uint32_t stamp = 0;  // the component search that last reached it
    std::int32_t local = 0;   // its index in comp_links_ for that search
    std::array<std::int32_t, kMaxShare> ids;
    std::size_t size() const { return static_cast<std::size_t>(n); }
    bool empty() const { return n == 0; }
    const std::int32_t* begin() const { return ids.data(); }
    const std::int32_t* end() const { return ids.data() + n; }
  };

  void join_link(std::int32_t l, std::int32_t id) {
    LinkFlows& on = link_flows_[static_cast<std::size_t>(l)];
    if (on.n + 1 > kMaxShare)
      throw SimError("replay: more than " + std::to_string(kMaxShare) + " flows share one NIC link");
    on.ids[static_cast<std::size_t>(on.n++)] = id;
  }
  void leave_link(std::int32_t l, std::int32_t id) {
    LinkFlows& on = link_flows_[static_cast<std::size_t>(l)];
    std::int32_t* at = std::find(on.ids.data(), on.ids.data() + on.n, id);
    std::copy(at + 1, on.ids.data() + on.n, at);  // the others keep their order
    --on.n;
  }

  [[gnu::noinline]] void schedule_flow(std::int32_t id) {
    Flow& fl = flows_[static_cast<std::size_t>(id)];
    ++fl.version;
    const std::int64_t per_ps = fl.rate;
    // 64-bit division whenever the work fits (transfers under ~3 hours at full rate); past
    // the clock's end the time saturates, and later() makes it an error at its event.
    const auto dt = fl.remaining < (static_cast<__int128>(1) << 62)
                        ? static_cast<SimTime>((static_cast<std::int64_t>(fl.remaining) + per_ps - 1) / per_ps)
                        : static_cast<SimTime>(
                              std::min<__int128>((fl.remaining + per_ps - 1) / per_ps, kClockEnd));
    flow_events_.push(FlowEvent{later(now_, std::max<SimTime>(dt, 0)), fl.priority, flow_sequence_++, id, fl.version});
  }

  // Refills the component of the active flows `seeds` (the flows reachable through links
  // that carry two flows or more; a link with one flow never holds it below its stand-alone
  // rate) and reschedules every flow whose rate changed, in increasing id order (it decides
  // the order of their finish events).
  void reshare(const std::vector<std::int32_t>& seeds) {
    if (++stamp_ == 0) {  // wrapped: forget every old search
      for (Flow& fl : flows_) fl.stamp = 0;
      for (int l = 0; l < 2 * devices_; ++l) link_flows_[static_cast<std::size_t>(l)].stamp = 0;
      stamp_ = 1;
    }
    comp_flows_.clear();
    comp_links_.clear();
    for (std::int32_t id : seeds) {
      Flow& fl = flows_[static_cast<std::size_t>(id)];
      if (!fl.active || fl.stamp == stamp_) continue;
      fl.stamp = stamp_;
      comp_flows_.push_back(id);
    }
    for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
      for (std::int32_t l : flows_[static_cast<std::size_t>(comp_flows_[i])].links) {
        const auto li = static_cast<std::size_t>(l);
        LinkFlows& on = link_flows_[li];
        if (on.size() < 2 || on.stamp == stamp_) continue;
        on.stamp = stamp_;
        on.local = static_cast<std::int32_t>(comp_links_.size());
        comp_links_.push_back(l);
        for (std::int32_t other : on) {
          Flow& o = flows_[static_cast<std::size_t>(other)];
          if (o.stamp == stamp_) continue;
          o.stamp = stamp_;
          comp_flows_.push_back(other);
        }
      }
    }
    if (comp_flows_.size() > 1) std::sort(comp_flows_.begin(), comp_flows_.end());
    fill_begin_.assign(1, 0);
    fill_links_.clear();
    for (std::int32_t id : comp_flows_) {
      for (std::int32_t l : flows_[static_cast<std::size_t>(id)].links)
        if (const LinkFlows& on = link_flows_[static_cast<std::size_t>(l)]; on.stamp == stamp_)
          fill_links_.push_back(on.local);
      fill_begin_.push_back(static_cast<std::int32_t>(fill_links_.size()));
    }
    fill_capacity_.assign(comp_links_.size(), kWorkUnits);
    fill_demand_.assign(comp_flows_.size(), kWorkUnits);
    fill_rate_.assign(comp_flows_.size(), 0);
    max_min_fill<std::int64_t>(fill_begin_, fill_links_, fill_capacity_, fill_demand_, fill_rate_, fill_scratch_);
    for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
      Flow& fl = flows_[static_cast<std::size_t>(comp_flows_[i])];
      const std::int64_t rate = fill_rate_[i];
      if (rate == fl.rate) continue;
      if (rate <= 0) throw SimError("replay: a flow got no bandwidth");
      if (fl.rate > 0) fl.remaining -= static_cast<__int128>(now_ - fl.last) * fl.rate;
      fl.last = now_;
      const bool due = fl.rate > 0 && fl.remaining <= 0;  // its finish event, now, stands
      fl.rate = rate;
      if (!due) schedule_flow(comp_flows_[i]);
    }
  }

  void start_flow(const std::int32_t* insts, int count, SimTime dur) {
    std::int32_t id;
    if (!free_flows_.empty()) {
      id = free_flows_.back();
      free_flows_.pop_back();
    } else {
      id = static_cast<std::int32_t>(flows_.size());
      flows_.emplace_back();
    }
    Flow& fl = flows_[static_cast<std::size_t>(id)];
    fl.insts.assign(insts, insts + count);
    fl.links.clear();
    fl.priority = 7;
    for (int k = 0; k < count; ++k) {
      const int d = device_of(insts[k]);
      const auto stream = static_cast<Stream>(tasks_[static_cast<std::size_t>(task_of(insts[k]))].stream);
      fl.priority = std::min<std::uint32_t>(fl.priority, static_cast<std::uint32_t>(stream));
      if (stream != Stream::pp_recv) fl.links.push_back(2 * d);
      if (stream != Stream::pp_send) fl.links.push_back(2 * d + 1);
    }
    fl.remaining = static_cast<__int128>(dur) * kWorkUnits;
    fl.last = now_;
    fl.start = now_;
    fl.active = true;
    if (dur == 0) {  // ends now: it holds no link for any time
      fl.links.clear();
      fl.rate = kWorkUnits;
      schedule_flow(id);
      return;
    }
    // Alone on its links (the common case): full rate, and no other flow changes pace.
    bool alone = true;
    for (std::int32_t l : fl.links) alone = alone && link_flows_[static_cast<std::size_t>(l)].empty();
    for (std::int32_t l : fl.links) join_link(l, id);
    if (alone) {
      fl.rate = kWorkUnits;
      schedule_flow(id);
      return;
    }
    fl.rate = 0;  // the next refill (run()) fills and schedules it
    dirty_.push_back(id);
  }

  void end_flow(std::int32_t id) {
    Flow& fl = flows_[static_cast<std::size_t>(id)];
    fl.active = false;
    for (std::int32_t l : fl.links) leave_link(l, id);
    // Taken out of the slot (swapped, not copied): the slot is reused as soon as a member's
    // successor starts a flow, which refills its lists.
    std::vector<std::int32_t>& links = end_links_;
    std::vector<std::int32_t>& insts = end_insts_;
    links.swap(fl.links);
    insts.swap(fl.insts);
    const SimTime start = fl.start;
    free_flows_.push_back(id);
    // Flows left on these links may speed up, and their neighbours change: refilled in run().
    for (std::int32_t l : links)
      for (std::int32_t other : link_flows_[static_cast<std::size_t>(l)]) dirty_.push_back(other);
    // Rendezvous members record their spans here (single-rank ones in finish()).
    int first_span = -1;
    for (std::size_t k = 0; k < insts.size(); ++k) {
      const std::int32_t inst = insts[k];
      const FlatTask& f = tasks_[static_cast<std::size_t>(task_of(inst))];
      if (f.comm != 3)
        dev_[static_cast<std::size_t>(device_of(inst))].collective_s +=
            static_cast<double>(now_ - start) / kPsPerS;
      if (f.rendezvous < 0 && !f.collective) continue;
      const int span = record_span(inst, start, now_);
      if (f.rendezvous >= 0) {
        if (k == 0)
          first_span = span;
        else if (span >= 0)
          out_.timeline.flows.emplace_back(first_span, span);
      }
    }
    for (std::size_t k = 0; k < insts.size(); ++k) finish(insts[k]);  // finish() never ends a flow
  }

  void check_end() {
    if (out_.tasks_run == instances_) return;
    for (std::int64_t i = 0; i < instances_; ++i) {
      if (state(static_cast<std::int32_t>(i)).pending != -1) {
        const Task& task = g_.task(static_cast<int>(i / r_));
        throw SimError("replay: " + std::to_string(instances_ - out_.tasks_run) +
                       " tasks never ran (deadlock or dependency cycle); first: stage " + std::to_string(task.stage) +
                       " " + to_string(task.stream) + " " + to_string(task.category) + " micro-batch " +
                       std::to_string(task.microbatch) + " chunk " + std::to_string(task.chunk));
      }
    }
    throw SimError("replay: a task ran twice or a rendezvous never completed");
  }

  const TaskGraph& g_;
  const ReplayOptions& opt_;
  int n_ = 0, r_ = 1, rfull_ = 1, devices_ = 0;
  int merge_ = 1;  // TP ranks per replayed device
  std::int64_t instances_ = 0;
  std::unique_ptr<FlatTask[]> tasks_;         // by task id
  const std::int32_t* succ_ = nullptr;  // the graph's successor rows (TaskGraph)
  std::int32_t num_succ_ = 0;
  BigArray<std::int32_t> collective_count_, p2p_count_;
  BigArray<InstanceState> states_;  // full mode, per instance (else FlatTask::own)
  BigArray<SimTime> arrival_;       // per instance, when it started (only if spans or full mode read it)
  std::unique_ptr<std::int32_t[]> initial_;  // tasks without dependencies, in id order
  int num_initial_ = 0;
  BigArray<StreamQueues> queues_;  // per device
  BigArray<DeviceState> dev_;
  std::vector<double> inv_speed_;
  bool slow_devices_ = false;  // some device_speed is not 1 (the hot path skips the lookup otherwise)
  bool interference_ = false;  // some transfer has a compute share (Task::compute_share)
  bool host_ = false;          // some compute task has host time or a host synchronization
  std::unique_ptr<SimTime[]> host_ps_;  // Task::host_s per task (only when host_)
  SimTime host_lead_ps_ = 0;            // TaskGraph::host_lead_s
  int host_waiting_ = 0;                // compute tasks waiting for their host as events (host_woke)
  std::vector<double> inv_link_;
  bool slow_links_ = false;
  bool record_spans_ = false;       // ReplayOptions::record_spans
  std::vector<GroupSlice> groups_;  // kind * r + rank
  Queue heap_;
  std::vector<Flow> flows_;
  std::vector<std::int32_t> free_flows_;
  BigArray<LinkFlows> link_flows_;  // per NIC link (device * 2 + 0 send, 1 receive)
  std::priority_queue<FlowEvent, std::vector<FlowEvent>, std::greater<>> flow_events_;
  std::uint64_t flow_sequence_ = 0;
  std::vector<std::int32_t> members_, end_links_, end_insts_;
  // reshare's component search and filling, reused from one call to the next.
  std::vector<std::int32_t> dirty_;  // flows to refill before the clock moves (with their components)
  std::uint32_t stamp_ = 0;
  std::vector<std::int32_t> comp_flows_, comp_links_, fill_begin_, fill_links_;
  std::vector<std::int64_t> fill_capacity_, fill_demand_, fill_rate_;
  MaxMinScratch<std::int64_t> fill_scratch_;
  SimTime now_ = 0;
  ReplayResult out_;
};

}  // namespace

double replay_time_bound_s(const TaskGraph& graph, const ReplayOptions& options) {
  // Until the step ends some task is always in progress (the clock only moves to the end of
  // one), so the step is at most the sum of its tasks' wall times. A transfer sharing a NIC
  // runs at no less than 1 / kMaxFlowsPerLink of its rate. In full mode the ranks of a stage run in
  // lockstep on a uniform cluster (the same step as one rank per stage); speed factors
  // stretch compute and transfers by at most their slowest device or link.
  double compute = 0, comm = 0;
  for (const Task& t : graph.tasks) {
    const double d = std::max(0.0, t.duration_s);  // the replay refuses negative durations
    if (kCommKind[static_cast<std::size_t>(t.category)] < 0)
      compute += d + (t.host_s > 0 || t.host_sync ? std::max(0.0, t.host_s) + graph.host_lead_s : 0.0);
    else
      comm += d * (t.tier == 1 && options.share_links ? kMaxFlowsPerLink : 1.0);
  }
  if (!options.full) return compute * max_stretch(options.device_speed) + comm;
  return compute * max_stretch(options.device_speed) + comm * max_stretch(options.link_speed);
}

namespace {

ReplayResult replay_full(const TaskGraph& graph, const ReplayOptions& options, int merge) {
  const auto uneven = [](const std::vector<double>& speeds) {
    return std::any_of(speeds.begin(), speeds.end(), [&](double s) { return s != speeds.front(); });
  };
  if (uneven(options.device_speed) || uneven(options.link_speed))
    return Replayer<true, RadixQueue>(graph, options, merge).run();
  return Replayer<true, EventQueue<true>>(graph, options, merge).run();
}

}  // namespace

ReplayResult replay(const TaskGraph& graph, const ReplayOptions& options) {
  if (!options.full) return Replayer<false, EventQueue<false>>(graph, options, 1).run();
  const int width = tp_lockstep_width(graph, options);
  if (width == 1) return replay_full(graph, options, 1);
  // Checked here, per rank, as the per-rank replay checks them: a group's slowest would hide a
  // NaN, and a short list would be read past its end.
  const std::int64_t devices = static_cast<std::int64_t>(graph.stages) * graph.ranks_per_stage;
  const auto check = [devices](const std::vector<double>& speeds, const std::string& what) {
    if (!speeds.empty() && static_cast<std::int64_t>(speeds.size()) != devices)
      throw SimError("replay: " + what + "_speed has " + std::to_string(speeds.size()) + " entries for " +
                     std::to_string(devices) + " devices");
    for (double v : speeds)
      if (!(v > 0)) throw SimError("replay: " + what + " speed must be positive");
  };
  check(options.device_speed, "device");
  check(options.link_speed, "link");
  return expand_merged(replay_full(graph, merged_options(options, width), width), width, options.device_speed);
}

}  // namespace trainsim
