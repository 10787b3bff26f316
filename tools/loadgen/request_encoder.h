#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace santral::loadgen {

enum class Command { Get, Set, Incr };

// Appends one request in RESP to a buffer: GET, SET (a 3-byte value, redis-benchmark's default)
// or INCR of key:<12 digits>, the number uniform over 0 .. keys-1 (redis-benchmark's
// key:__rand_int__ names, so the keys its runs wrote are the ones read here).
class RequestEncoder {
 public:
  RequestEncoder(Command command, std::uint64_t keys, std::uint64_t seed);

  // Returns the key number it chose.
  std::uint64_t append(std::string& out);

 private:
  Command command_;
  std::mt19937_64 random_;
  std::uniform_int_distribution<std::uint64_t> key_number_;
};

}  // namespace santral::loadgen
