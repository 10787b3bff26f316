#include "protocol/key_extraction.h"

#include <optional>

#include "protocol/arguments.h"

namespace santral::protocol {
namespace {

// Applies one key spec; false when it does not fit the arguments.
bool apply_spec(const KeySpec& spec, std::span<const std::string_view> args, bool variadic,
                std::vector<std::uint32_t>& positions) {
  const long argc = static_cast<long>(args.size());
  long first = 0;
  switch (spec.begin) {
    case KeySpec::Begin::Index:
      first = spec.index;
      break;
    case KeySpec::Begin::Keyword: {
      long start = spec.startfrom > 0 ? spec.startfrom : argc + spec.startfrom;
      long end = spec.startfrom > 0 ? argc - 1 : 1;
      for (long i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (equals_nocase(args[static_cast<std::size_t>(i)], spec.keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) return true;  // keyword absent: this spec names no keys
      break;
    }
    case KeySpec::Begin::Unknown:
      return false;
  }

  long last = 0;
  long step = spec.keystep;
  switch (spec.find) {
    case KeySpec::Find::Range:
      if (spec.lastkey >= 0) {
        last = first + spec.lastkey;
      } else if (spec.limit == 0) {
        last = argc + spec.lastkey;
      } else {
        last = first + ((argc - first) / spec.limit + spec.lastkey);
      }
      break;
    case KeySpec::Find::Keynum: {
      long at = first + spec.keynumidx;
      if (at >= argc) return false;
      std::string_view text = args[static_cast<std::size_t>(at)];
      auto parsed = parse_integer(text);
      if (!parsed || *parsed < 0) return false;
      long long numkeys = *parsed;
      first += spec.firstkey;
      last = first + static_cast<long>(numkeys) - 1;
      if (numkeys == 0) return true;
      break;
    }
    case KeySpec::Find::Unknown:
      return false;
  }
  if (step <= 0) step = 1;
  if (last >= argc || last < first || first >= argc) return false;
  for (long i = first; i <= last; i += step) {
    if (i >= argc) {
      if (variadic) continue;
      return false;
    }
    positions.push_back(static_cast<std::uint32_t>(i));
  }
  return true;
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE dst]:
// the sorted key, and the last STORE destination. BY/GET patterns name keys only at run time.
bool sort_keys(std::span<const std::string_view> args, std::vector<std::uint32_t>& positions) {
  if (args.size() < 2) return false;
  positions.push_back(1);
  std::uint32_t store = 0;
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (equals_nocase(args[i], "limit")) {
      i += 2;
    } else if (equals_nocase(args[i], "get") || equals_nocase(args[i], "by")) {
      i += 1;
    } else if (equals_nocase(args[i], "store") && i + 1 < args.size()) {
      store = static_cast<std::uint32_t>(++i);
    }
  }
  if (store != 0) positions.push_back(store);
  return true;
}

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH ..] [AUTH2 .. ..] [KEYS key ...]
bool migrate_keys(std::span<const std::string_view> args, std::vector<std::uint32_t>& positions) {
  if (args.size() < 6) return false;
  for (std::size_t i = 6; i < args.size(); ++i) {
    if (equals_nocase(args[i], "keys")) {
      if (!args[3].empty()) return false;  // Redis: a key and KEYS together is a syntax error
      for (std::size_t k = i + 1; k < args.size(); ++k)
        positions.push_back(static_cast<std::uint32_t>(k));
      return true;
    }
  }
  positions.push_back(3);
  return true;
}

}  // namespace

bool find_keys(const CommandSpec& spec, std::span<const std::string_view> args,
               std::vector<std::uint32_t>& positions) {
  positions.clear();
  if (spec.name == "sort" || spec.name == "sort_ro") return sort_keys(args, positions);
  if (spec.name == "migrate") return migrate_keys(args, positions);
  for (const KeySpec& key_spec : spec.key_specs) {
    if (key_spec.flags & KeySpec::kNotKey) continue;
    if (!apply_spec(key_spec, args, spec.arity < 0, positions)) {
      positions.clear();
      return false;
    }
  }
  return true;
}

// The flags of SET's and BITFIELD's key, whose key specs say VARIABLE_FLAGS: Redis 7.0 finds
// them by its setGetKeys and bitfieldGetKeys. SET writes only, unless GET reads the old value;
// BITFIELD with nothing but GET (and OVERFLOW) reads only.
std::optional<std::uint16_t> variable_flags(const CommandSpec& spec,
                                            std::span<const std::string_view> args) {
  constexpr std::uint16_t kReadWrite = KeySpec::kRW | KeySpec::kAccess | KeySpec::kUpdate;
  if (spec.name == "set") {
    for (std::size_t i = 3; i < args.size(); ++i)
      if (equals_nocase(args[i], "get")) return kReadWrite;
    return KeySpec::kOW | KeySpec::kUpdate;
  }
  if (spec.name != "bitfield") return std::nullopt;
  for (std::size_t i = 2; i < args.size(); ++i) {
    std::size_t left = args.size() - i - 1;
    if (equals_nocase(args[i], "get") && left >= 2) {
      i += 2;
    } else if (equals_nocase(args[i], "overflow") && left >= 1) {
      i += 1;
    } else {
      return kReadWrite;  // SET, INCRBY, or a syntax error: not read-only
    }
  }
  return KeySpec::kRO | KeySpec::kAccess;
}

bool find_key_references(const CommandSpec& spec, std::span<const std::string_view> args,
                         std::vector<KeyReference>& keys) {
  keys.clear();
  if (auto flags = variable_flags(spec, args)) {
    if (args.size() < 2) return false;
    keys.push_back({1, *flags});
    return true;
  }
  std::vector<std::uint32_t> positions;
  // SORT's and MIGRATE's keys come from their own rules; their flags are Redis's getkeys ones.
  if (spec.name == "sort" || spec.name == "sort_ro" || spec.name == "migrate") {
    if (!find_keys(spec, args, positions)) return false;
    for (std::size_t i = 0; i < positions.size(); ++i) {
      std::uint16_t flags = spec.name == "migrate"
                                ? KeySpec::kRW | KeySpec::kAccess | KeySpec::kDelete
                            : i == 0 ? KeySpec::kRO | KeySpec::kAccess
                                     : KeySpec::kOW | KeySpec::kUpdate;
      keys.push_back({positions[i], flags});
    }
    return true;
  }
  for (const KeySpec& key_spec : spec.key_specs) {
    if (key_spec.flags & KeySpec::kNotKey) continue;
    positions.clear();
    if (!apply_spec(key_spec, args, spec.arity < 0, positions)) {
      keys.clear();
      return false;
    }
    for (std::uint32_t position : positions) keys.push_back({position, key_spec.flags});
  }
  return true;
}

}  // namespace santral::protocol
