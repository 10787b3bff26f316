#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace santral::hashkit {

// A key hash as twemproxy computes it: every function returns the 32-bit value twemproxy's
// src/hashkit/ returns for the same bytes, so that the same server list places every key on
// the same server in both.
using HashFunction = std::uint32_t (*)(std::string_view key);

std::uint32_t one_at_a_time(std::string_view key);
std::uint32_t md5(std::string_view key);
std::uint32_t crc16(std::string_view key);
std::uint32_t crc32(std::string_view key);
std::uint32_t crc32a(std::string_view key);
std::uint32_t fnv1_64(std::string_view key);
std::uint32_t fnv1a_64(std::string_view key);
std::uint32_t fnv1_32(std::string_view key);
std::uint32_t fnv1a_32(std::string_view key);
std::uint32_t hsieh(std::string_view key);
std::uint32_t murmur(std::string_view key);
std::uint32_t jenkins(std::string_view key);

// The function twemproxy's config calls `name` (e.g. "fnv1a_64"), or nullopt.
std::optional<HashFunction> hash_function_named(std::string_view name);
// All names hash_function_named() accepts, for error messages.
std::span<const std::string_view> hash_function_names();

}  // namespace santral::hashkit
