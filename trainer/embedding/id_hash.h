// How a 64-bit feature id is spread: over the parameter servers (every process must agree, so
// it is part of the wire contract: proto/disttrain/trainer/v1/parameter_server.proto), and, inside
// a table, over its lock stripes and hash slots. One 64-bit mixer (SplitMix64's finaliser) with a
// different salt per use, so that the ids a server holds are spread evenly over its stripes and
// slots whatever the number of servers.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_ID_HASH_H_
#define DISTTRAIN_TRAINER_EMBEDDING_ID_HASH_H_

#include <cstdint>
#include <string_view>

namespace disttrain::trainer::embedding {

inline constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// The parameter server (0..num_ps-1) that holds the rows of `id`, in every table.
inline constexpr int PsOfId(uint64_t id, int num_ps) {
  return static_cast<int>(Mix64(id) % static_cast<uint64_t>(num_ps));
}

// Salted hashes for a table's stripes, slots and sketch rows.
inline constexpr uint64_t SaltedHash(uint64_t id, uint64_t salt) {
  return Mix64(id ^ (salt * 0x9e3779b97f4a7c15ull));
}

// The id of a string value of a categorical column (FNV-1a, then mixed): stable across
// processes, machines and releases, since checkpoints keep rows by id.
inline uint64_t IdOfString(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return Mix64(h);
}

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_ID_HASH_H_
