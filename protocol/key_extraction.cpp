#include "protocol/key_extraction.h"

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

}  // namespace santral::protocol
