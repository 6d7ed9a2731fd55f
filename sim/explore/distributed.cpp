#include "trainsim/explore/distributed.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "trainsim/common/error.hpp"
#include "trainsim/explore/monte_carlo.hpp"

namespace trainsim {

namespace {

// Values of plain types appended as their bytes: every process of a job runs the same
// binary on the same kind of machine, so a double comes back bit for bit.
class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_text(std::string_view text) {
    put(static_cast<std::uint64_t>(text.size()));
    bytes_.append(text);
  }
  template <class T>
  void put_vector(const std::vector<T>& values) {
    put(static_cast<std::uint64_t>(values.size()));
    for (const T& v : values) put(v);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string_view get_text() { return take(count(1)); }
  template <class T>
  std::vector<T> get_vector() {
    std::vector<T> values(count(sizeof(T)));
    for (T& v : values) v = get<T>();
    return values;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  // A length read from the bytes, checked against what is left before anything is allocated.
  std::size_t count(std::size_t item_size) {
    const auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - at_) / item_size) throw SimError("distributed: a gathered length runs past its bytes");
    return static_cast<std::size_t>(n);
  }
  std::string_view take(std::size_t n) {
    if (n > bytes_.size() - at_) throw SimError("distributed: gathered bytes end inside a value");
    const std::string_view out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// A field added to PlanOutcome must be added to encode_outcome and decode_outcome too, or
// rank 0 would print it as 0 for other processes' items: this fails the build until then.
static_assert(sizeof(PlanOutcome) == 8 + sizeof(std::string) + 8 * sizeof(double) + 2 * sizeof(std::vector<double>),
              "PlanOutcome changed: encode and decode the new field in encode_outcome / decode_outcome");
static_assert(std::is_trivially_copyable_v<StageBreakdown>, "StageBreakdown is sent as its bytes");

}  // namespace

std::vector<std::size_t> share_of(std::size_t n, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw SimError("distributed: rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " processes");
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(rank); i < n; i += static_cast<std::size_t>(ranks)) out.push_back(i);
  return out;
}

void for_each_in_share(const Distribution& distribution, std::size_t n, int max_threads,
                       const std::function<void(std::size_t)>& body) {
  const std::vector<std::size_t> mine = share_of(n, distribution.rank, distribution.ranks);
  auto run = [&] { tbb::parallel_for(std::size_t{0}, mine.size(), [&](std::size_t j) { body(mine[j]); }); };
  if (max_threads > 0) {
    tbb::task_arena arena(max_threads);
    arena.execute(run);
  } else {
    run();
  }
}

void gather_to_root(const Distribution& distribution, std::size_t n,
                    const std::function<std::string(std::size_t)>& encode,
                    const std::function<void(std::size_t, std::string_view)>& decode) {
  if (distribution.ranks == 1 || !distribution.gather) return;
  ByteWriter mine;
  for (std::size_t i : share_of(n, distribution.rank, distribution.ranks)) mine.put_text(encode(i));
  const std::vector<std::string> all = distribution.gather(mine.take());
  if (!distribution.root()) return;
  if (all.size() != static_cast<std::size_t>(distribution.ranks))
    throw SimError("distributed: gathered " + std::to_string(all.size()) + " processes' items of " +
                   std::to_string(distribution.ranks));
  for (int rank = 1; rank < distribution.ranks; ++rank) {
    ByteReader reader(all[static_cast<std::size_t>(rank)]);
    for (std::size_t i : share_of(n, rank, distribution.ranks)) decode(i, reader.get_text());
    if (!reader.done()) throw SimError("distributed: process " + std::to_string(rank) + " sent more items than its share");
  }
}

std::string encode_outcome(const PlanOutcome& o) {
  ByteWriter w;
  w.put(o.status);
  w.put_text(o.reason);
  for (double x : {o.step_time_s, o.tokens_per_s, o.tokens_per_s_per_device, o.mfu, o.bubble_fraction,
                   o.critical_stage_bubble_fraction, o.peak_memory_bytes, o.hbm_bytes})
    w.put(x);
  w.put_vector(o.stage_peak_memory_bytes);
  w.put_vector(o.stages);
  return w.take();
}

PlanOutcome decode_outcome(std::string_view bytes) {
  ByteReader r(bytes);
  PlanOutcome o;
  o.status = r.get<PlanStatus>();
  o.reason = std::string(r.get_text());
  for (double* x : {&o.step_time_s, &o.tokens_per_s, &o.tokens_per_s_per_device, &o.mfu, &o.bubble_fraction,
                    &o.critical_stage_bubble_fraction, &o.peak_memory_bytes, &o.hbm_bytes})
    *x = r.get<double>();
  o.stage_peak_memory_bytes = r.get_vector<double>();
  o.stages = r.get_vector<StageBreakdown>();
  if (!r.done()) throw SimError("distributed: bytes left after an outcome");
  return o;
}

void gather_samples(const Distribution& distribution, MonteCarloResult& result) {
  gather_to_root(
      distribution, result.step_s.size(),
      [&](std::size_t k) {
        ByteWriter w;
        w.put(result.step_s[k]);
        w.put(result.critical_stage[k]);
        w.put(result.slowest_device[k]);
        w.put(result.slowest_speed[k]);
        return w.take();
      },
      [&](std::size_t k, std::string_view bytes) {
        ByteReader r(bytes);
        result.step_s[k] = r.get<double>();
        result.critical_stage[k] = r.get<int>();
        result.slowest_device[k] = r.get<int>();
        result.slowest_speed[k] = r.get<double>();
        if (!r.done()) throw SimError("distributed: bytes left after a sample");
      });
}

}  // namespace trainsim
