#include "trainer/embedding/embedding_table.h"

#include <algorithm>
#include <cstring>

#include "trainer/embedding/id_hash.h"
#include "trainer/embedding/row_init.h"
#include "trainer/embedding/row_optimizer.h"

namespace disttrain::trainer::embedding {
namespace {

int StripeCount(const TableConfig& c) {
  if (c.capacity == 0) return EmbeddingTable::kStripes;
  int n = 1;
  while (n < EmbeddingTable::kStripes &&
         c.capacity / static_cast<uint64_t>(2 * n) >= EmbeddingTable::kMinStripeRows)
    n *= 2;
  return n;
}

// Counters of a sketch per stripe: enough that ids below the threshold rarely collide with each
// other, bounded whatever the stream (16 MiB per table at most).
size_t SketchWidth(const TableConfig& c) {
  const uint64_t expected = c.capacity > 0 ? c.capacity : (uint64_t{1} << 22);
  return std::clamp<uint64_t>(expected * 2 / StripeCount(c), 1024, 1 << 20);
}

uint64_t NextRandom(uint64_t* state) {
  *state += 0x9e3779b97f4a7c15ull;
  return Mix64(*state);
}

}  // namespace

EmbeddingTable::EmbeddingTable(TableConfig config, uint32_t first_version)
    : config_(std::move(config)),
      row_floats_(config_.dim * (1 + StatePerValue(config_.optimizer))),
      stripe_count_(StripeCount(config_)),
      stripes_(new Stripe[stripe_count_]),
      version_(first_version) {
  for (int i = 0; i < stripe_count_; ++i) {
    Stripe& s = stripes_[i];
    absl::MutexLock lock(&s.mu);
    s.rng = Mix64(config_.seed + i);
    if (config_.min_count > 1) s.sketch = std::make_unique<CountMinSketch>(SketchWidth(config_));
  }
}

EmbeddingTable::~EmbeddingTable() = default;

EmbeddingTable::Stripe& EmbeddingTable::StripeOf(uint64_t id) const {
  return stripes_[SaltedHash(id, 2) % static_cast<uint64_t>(stripe_count_)];
}

bool EmbeddingTable::Admitted(Stripe& s, uint64_t id, bool count) {
  if (s.sketch == nullptr) return true;
  const uint32_t seen = count ? s.sketch->Add(id) : s.sketch->Estimate(id);
  return seen >= config_.min_count;
}

void EmbeddingTable::EvictOne(Stripe& s) {
  if (s.used == 0) return;
  uint32_t victim = static_cast<uint32_t>(NextRandom(&s.rng) % s.used);
  for (int i = 1; i < kEvictionSamples; ++i) {
    const uint32_t c = static_cast<uint32_t>(NextRandom(&s.rng) % s.used);
    const Chunk& cc = *s.chunks[c / kChunkRows];
    const Chunk& vc = *s.chunks[victim / kChunkRows];
    const uint32_t c_tick = cc.ticks[c % kChunkRows], v_tick = vc.ticks[victim % kChunkRows];
    const uint32_t c_uses = cc.uses[c % kChunkRows], v_uses = vc.uses[victim % kChunkRows];
    const bool older = c_tick < v_tick;
    if (config_.eviction == Eviction::kLru ? older : c_uses < v_uses || (c_uses == v_uses && older))
      victim = c;
  }
  Chunk& vc = *s.chunks[victim / kChunkRows];
  const uint32_t vo = victim % kChunkRows;
  s.index.Erase(vc.ids[vo]);
  // The stripe's last row moves into the hole, so slots stay dense and storage stops growing.
  const uint32_t last = s.used - 1;
  if (victim != last) {
    Chunk& lc = *s.chunks[last / kChunkRows];
    const uint32_t lo = last % kChunkRows;
    std::memcpy(&vc.rows[size_t{vo} * row_floats_], &lc.rows[size_t{lo} * row_floats_],
                sizeof(float) * row_floats_);
    vc.ids[vo] = lc.ids[lo];
    vc.ticks[vo] = lc.ticks[lo];
    vc.uses[vo] = lc.uses[lo];
    vc.versions[vo] = lc.versions[lo];
    s.index.Update(vc.ids[vo], victim);
  }
  --s.used;
  rows_.fetch_sub(1, std::memory_order_relaxed);
  evicted_.fetch_add(1, std::memory_order_relaxed);
}

uint32_t EmbeddingTable::Create(Stripe& s, uint64_t id, const float* row) {
  if (config_.capacity > 0 &&
      rows_.load(std::memory_order_relaxed) >= static_cast<int64_t>(config_.capacity)) {
    if (s.used > 0) {
      EvictOne(s);
    } else {
      // This stripe is empty: evict from another one that is free now (TryLock: taking a second
      // stripe's lock while holding one must never wait, or two creators could deadlock).
      for (int k = 1; k < stripe_count_; ++k) {
        Stripe& other = stripes_[(&s - stripes_.get() + k) % stripe_count_];
        if (!other.mu.TryLock()) continue;
        const bool evicted = other.used > 0;
        if (evicted) EvictOne(other);
        other.mu.Unlock();
        if (evicted) break;
      }
    }
  }
  const uint32_t slot = s.used++;
  if (slot / kChunkRows >= s.chunks.size())
    s.chunks.push_back(std::make_unique<Chunk>(row_floats_));
  Chunk& c = *s.chunks[slot / kChunkRows];
  const uint32_t o = slot % kChunkRows;
  float* r = &c.rows[size_t{o} * row_floats_];
  if (row != nullptr) {
    std::memcpy(r, row, sizeof(float) * row_floats_);
  } else {
    InitialRow(config_.seed, id, config_.dim, config_.init_stddev, r);
    InitRowState(config_, r + config_.dim);
  }
  c.ids[o] = id;
  c.ticks[o] = clock_.load(std::memory_order_relaxed);
  c.uses[o] = 0;
  c.versions[o] = version_.load(std::memory_order_relaxed);
  s.index.Insert(id, slot);
  rows_.fetch_add(1, std::memory_order_relaxed);
  return slot;
}

void EmbeddingTable::Pull(absl::Span<const uint64_t> ids, bool train, float* out) {
  const uint32_t tick = clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  const int d = config_.dim;
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id = ids[i];
    float* o = out + i * d;
    Stripe& s = StripeOf(id);
    absl::MutexLock lock(&s.mu);
    uint32_t slot = s.index.Find(id);
    if (slot == FlatIndex::kAbsent) {
      if (!train || !Admitted(s, id, /*count=*/true)) {
        InitialRow(config_.seed, id, d, config_.init_stddev, o);
        continue;
      }
      slot = Create(s, id, nullptr);
      created_.fetch_add(1, std::memory_order_relaxed);
    }
    Chunk& c = *s.chunks[slot / kChunkRows];
    const uint32_t off = slot % kChunkRows;
    std::memcpy(o, &c.rows[size_t{off} * row_floats_], sizeof(float) * d);
    if (train) {
      c.ticks[off] = tick;
      if (c.uses[off] != UINT32_MAX) ++c.uses[off];
    }
  }
  pulled_.fetch_add(ids.size(), std::memory_order_relaxed);
}

void EmbeddingTable::Push(absl::Span<const uint64_t> ids, const float* grads) {
  const uint32_t tick = clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint32_t version = version_.load(std::memory_order_relaxed);
  const int d = config_.dim;
  uint64_t dropped = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id = ids[i];
    Stripe& s = StripeOf(id);
    absl::MutexLock lock(&s.mu);
    uint32_t slot = s.index.Find(id);
    if (slot == FlatIndex::kAbsent) {
      if (!Admitted(s, id, /*count=*/false)) {
        ++dropped;
        continue;
      }
      slot = Create(s, id, nullptr);
      created_.fetch_add(1, std::memory_order_relaxed);
    }
    Chunk& c = *s.chunks[slot / kChunkRows];
    const uint32_t off = slot % kChunkRows;
    float* r = &c.rows[size_t{off} * row_floats_];
    ApplyRowGradient(config_, grads + i * d, r, r + d);
    c.ticks[off] = tick;
    c.versions[off] = version;
  }
  updated_.fetch_add(ids.size() - dropped, std::memory_order_relaxed);
  if (dropped > 0) not_admitted_.fetch_add(dropped, std::memory_order_relaxed);
}

uint32_t EmbeddingTable::Mark() { return version_.fetch_add(1, std::memory_order_relaxed); }

void EmbeddingTable::ForEachStripe(
    uint32_t since,
    absl::FunctionRef<void(absl::Span<const uint64_t>, absl::Span<const float>)> fn) const {
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  for (int i = 0; i < stripe_count_; ++i) {
    ids.clear();
    rows.clear();
    {
      Stripe& s = stripes_[i];
      absl::MutexLock lock(&s.mu);
      for (uint32_t slot = 0; slot < s.used; ++slot) {
        const Chunk& c = *s.chunks[slot / kChunkRows];
        const uint32_t off = slot % kChunkRows;
        if (c.versions[off] <= since) continue;
        ids.push_back(c.ids[off]);
        const float* r = &c.rows[size_t{off} * row_floats_];
        rows.insert(rows.end(), r, r + row_floats_);
      }
    }
    if (!ids.empty()) fn(ids, rows);
  }
}

void EmbeddingTable::ForEachRow(uint32_t since,
                                absl::FunctionRef<void(uint64_t, const float*)> fn) const {
  ForEachStripe(since, [&](absl::Span<const uint64_t> ids, absl::Span<const float> rows) {
    for (size_t i = 0; i < ids.size(); ++i) fn(ids[i], &rows[i * row_floats_]);
  });
}

void EmbeddingTable::Restore(uint64_t id, const float* row) {
  Stripe& s = StripeOf(id);
  absl::MutexLock lock(&s.mu);
  const uint32_t slot = s.index.Find(id);
  if (slot == FlatIndex::kAbsent) {
    Create(s, id, row);
    return;
  }
  Chunk& c = *s.chunks[slot / kChunkRows];
  std::memcpy(&c.rows[size_t{slot % kChunkRows} * row_floats_], row, sizeof(float) * row_floats_);
}

void EmbeddingTable::Clear() {
  for (int i = 0; i < stripe_count_; ++i) {
    Stripe& s = stripes_[i];
    absl::MutexLock lock(&s.mu);
    rows_.fetch_sub(s.used, std::memory_order_relaxed);
    s.used = 0;
    s.chunks.clear();
    s.index.Clear();
    if (s.sketch != nullptr) s.sketch->Clear();
  }
}

EmbeddingTable::Stats EmbeddingTable::stats() const {
  Stats st;
  st.rows = static_cast<uint64_t>(std::max<int64_t>(0, rows_.load()));
  st.created = created_.load();
  st.evicted = evicted_.load();
  st.not_admitted = not_admitted_.load();
  st.pulled = pulled_.load();
  st.updated = updated_.load();
  const uint64_t chunk_bytes = uint64_t{kChunkRows} * (row_floats_ * 4 + 8 + 3 * 4);
  for (int i = 0; i < stripe_count_; ++i) {
    Stripe& s = stripes_[i];
    absl::MutexLock lock(&s.mu);
    st.memory_bytes += s.chunks.size() * chunk_bytes + s.index.MemoryBytes();
    if (s.sketch != nullptr) st.memory_bytes += s.sketch->MemoryBytes();
  }
  return st;
}

}  // namespace disttrain::trainer::embedding
