#include "protocol/learned_commands.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "protocol/command_categories.h"

namespace santral::protocol {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

using Type = ReplyValue::Type;

bool is_string(const ReplyValue& v) {
  return v.type == Type::SimpleString || v.type == Type::BulkString ||
         v.type == Type::VerbatimString;
}
bool is_list(const ReplyValue& v) {
  return v.type == Type::Array || v.type == Type::Set || v.type == Type::Map;
}

// A field of a RESP2 array of pairs or a RESP3 map; nullptr when absent.
const ReplyValue* field(const ReplyValue& pairs, std::string_view name) {
  if (!is_list(pairs)) return nullptr;
  for (std::size_t i = 0; i + 1 < pairs.elements.size(); i += 2)
    if (is_string(pairs.elements[i]) && pairs.elements[i].text == name)
      return &pairs.elements[i + 1];
  return nullptr;
}

std::int64_t number(const ReplyValue* v) {
  if (v == nullptr) return 0;
  if (v->type == Type::Integer) return v->integer;
  std::int64_t out = 0;
  std::from_chars(v->text.data(), v->text.data() + v->text.size(), out);
  return out;
}

std::int16_t small(const ReplyValue* v) {
  return static_cast<std::int16_t>(std::clamp<std::int64_t>(number(v), -32768, 32767));
}

std::uint16_t key_flag_named(std::string_view flag) {
  static constexpr std::pair<std::string_view, std::uint16_t> kFlags[] = {
      {"RO", KeySpec::kRO},
      {"RW", KeySpec::kRW},
      {"OW", KeySpec::kOW},
      {"RM", KeySpec::kRM},
      {"access", KeySpec::kAccess},
      {"update", KeySpec::kUpdate},
      {"insert", KeySpec::kInsert},
      {"delete", KeySpec::kDelete},
      {"not_key", KeySpec::kNotKey},
      {"incomplete", KeySpec::kIncomplete},
      {"variable_flags", KeySpec::kVariableFlags},
  };
  for (const auto& [name, bit] : kFlags)
    if (name == flag) return bit;
  return 0;
}

KeySpecShape read_key_spec(const ReplyValue& raw) {
  KeySpecShape shape;
  KeySpec& spec = shape.spec;
  if (const ReplyValue* flags = field(raw, "flags"))
    for (const auto& flag : flags->elements) spec.flags |= key_flag_named(flag.text);
  if (const ReplyValue* begin = field(raw, "begin_search")) {
    const ReplyValue* type = field(*begin, "type");
    const ReplyValue* detail = field(*begin, "spec");
    if (type != nullptr && detail != nullptr && type->text == "index") {
      spec.begin = KeySpec::Begin::Index;
      spec.index = small(field(*detail, "index"));
    } else if (type != nullptr && detail != nullptr && type->text == "keyword") {
      spec.begin = KeySpec::Begin::Keyword;
      if (const ReplyValue* keyword = field(*detail, "keyword")) shape.keyword = keyword->text;
      spec.startfrom = small(field(*detail, "startfrom"));
    }
  }
  if (const ReplyValue* find = field(raw, "find_keys")) {
    const ReplyValue* type = field(*find, "type");
    const ReplyValue* detail = field(*find, "spec");
    if (type != nullptr && detail != nullptr && type->text == "range") {
      spec.find = KeySpec::Find::Range;
      spec.lastkey = small(field(*detail, "lastkey"));
      spec.keystep = small(field(*detail, "keystep"));
      spec.limit = small(field(*detail, "limit"));
    } else if (type != nullptr && detail != nullptr && type->text == "keynum") {
      spec.find = KeySpec::Find::Keynum;
      spec.keynumidx = small(field(*detail, "keynumidx"));
      spec.firstkey = small(field(*detail, "firstkey"));
      spec.keystep = small(field(*detail, "keystep"));
    }
  }
  return shape;
}

// Redis 6 (no key specs): the keys at first..last by step, read and written alike.
void legacy_key_spec(std::int64_t first, std::int64_t last, std::int64_t step,
                     CommandShape& shape) {
  if (first <= 0) return;
  KeySpecShape key;
  key.spec.begin = KeySpec::Begin::Index;
  key.spec.index = static_cast<std::int16_t>(first);
  key.spec.find = KeySpec::Find::Range;
  key.spec.lastkey = static_cast<std::int16_t>(last < 0 ? last : last - first);
  key.spec.keystep = static_cast<std::int16_t>(step > 0 ? step : 1);
  key.spec.flags = KeySpec::kRW | KeySpec::kAccess | KeySpec::kUpdate;
  shape.key_specs.push_back(std::move(key));
}

bool read_entry(const ReplyValue& raw, CommandShape& shape) {
  if (raw.type != Type::Array || raw.elements.size() < 7 || !is_string(raw.elements[0]))
    return false;
  const auto& e = raw.elements;
  shape.name = lower(e[0].text);
  shape.arity = static_cast<std::int32_t>(number(&e[1]));
  for (const auto& flag : e[2].elements) shape.flags |= command_flag_named(flag.text);
  for (const auto& category : e[6].elements) {
    std::string_view name = category.text;
    if (name.starts_with('@')) name.remove_prefix(1);
    if (auto known = find_category(name)) shape.categories |= category_bit(*known);
  }
  if (e.size() >= 9 && is_list(e[8]) && !e[8].elements.empty()) {
    for (const auto& key : e[8].elements) shape.key_specs.push_back(read_key_spec(key));
  } else if (e.size() < 9) {
    legacy_key_spec(number(&e[3]), number(&e[4]), number(&e[5]), shape);
  }
  if (e.size() >= 10 && is_list(e[9])) {
    for (const auto& sub : e[9].elements) {
      CommandShape child;
      if (read_entry(sub, child)) shape.subcommands.push_back(std::move(child));
    }
    std::sort(shape.subcommands.begin(), shape.subcommands.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
  }
  return true;
}

void put_summary(std::string_view name, std::string_view summary,
                 std::vector<CommandShape>& shapes) {
  for (auto& shape : shapes) {
    if (shape.name == name) {
      shape.summary = summary;
      return;
    }
    if (name.starts_with(shape.name + "|")) put_summary(name, summary, shape.subcommands);
  }
}

void read_docs_into(const ReplyValue& reply, std::string_view parent,
                    std::vector<CommandShape>& shapes) {
  if (!is_list(reply)) return;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    std::string name = lower(reply.elements[i].text);
    if (!parent.empty() && name.find('|') == std::string::npos)
      name.insert(0, std::string(parent).append("|"));
    const ReplyValue& doc = reply.elements[i + 1];
    if (const ReplyValue* summary = field(doc, "summary")) put_summary(name, summary->text, shapes);
    if (const ReplyValue* subs = field(doc, "subcommands")) read_docs_into(*subs, name, shapes);
  }
}

bool keys_findable(const CommandShape& shape) {
  for (const auto& key : shape.key_specs) {
    if (key.spec.flags & KeySpec::kNotKey) continue;
    if (key.spec.begin == KeySpec::Begin::Unknown || key.spec.find == KeySpec::Find::Unknown ||
        (key.spec.flags & KeySpec::kIncomplete))
      return false;
  }
  return !(shape.key_specs.empty() && (shape.flags & kMovableKeys));
}

constexpr std::uint32_t kStateCategories = category_bit(AclCategory::Connection) |
                                           category_bit(AclCategory::Transaction) |
                                           category_bit(AclCategory::Pubsub);

}  // namespace

bool KeySpecShape::operator==(const KeySpecShape& other) const {
  const KeySpec& a = spec;
  const KeySpec& b = other.spec;
  return a.begin == b.begin && a.index == b.index && keyword == other.keyword &&
         a.startfrom == b.startfrom && a.find == b.find && a.lastkey == b.lastkey &&
         a.keystep == b.keystep && a.limit == b.limit && a.keynumidx == b.keynumidx &&
         a.firstkey == b.firstkey && a.flags == b.flags;
}

std::uint32_t command_flag_named(std::string_view flag) {
  static constexpr std::pair<std::string_view, std::uint32_t> kFlags[] = {
      {"readonly", kReadonly},
      {"write", kWrite},
      {"denyoom", kDenyOom},
      {"admin", kAdmin},
      {"pubsub", kPubsub},
      {"noscript", kNoscript},
      {"blocking", kBlocking},
      {"loading", kLoading},
      {"stale", kStale},
      {"fast", kFast},
      {"no_multi", kNoMulti},
      {"movablekeys", kMovableKeys},
      {"no_mandatory_keys", kNoMandatoryKeys},
  };
  for (const auto& [name, bit] : kFlags)
    if (name == flag) return bit;
  return 0;
}

std::uint32_t categories_of_flags(std::uint32_t flags) {
  std::uint32_t categories = 0;
  if (flags & kWrite) categories |= category_bit(AclCategory::Write);
  if (flags & kReadonly) categories |= category_bit(AclCategory::Read);
  if (flags & kAdmin)
    categories |= category_bit(AclCategory::Admin) | category_bit(AclCategory::Dangerous);
  if (flags & kPubsub) categories |= category_bit(AclCategory::Pubsub);
  if (flags & kBlocking) categories |= category_bit(AclCategory::Blocking);
  categories |= category_bit((flags & kFast) ? AclCategory::Fast : AclCategory::Slow);
  return categories;
}

std::vector<CommandShape> read_command_info(const ReplyValue& reply) {
  std::vector<CommandShape> shapes;
  if (!is_list(reply)) return shapes;
  for (const auto& raw : reply.elements) {
    CommandShape shape;
    if (read_entry(raw, shape)) shapes.push_back(std::move(shape));
  }
  return shapes;
}

void read_command_docs(const ReplyValue& reply, std::vector<CommandShape>& shapes) {
  read_docs_into(reply, "", shapes);
}

bool older_version(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return !a.empty() && b.empty();
  auto parts = [](std::string_view text) {
    std::vector<long> out;
    while (!text.empty()) {
      long part = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), part);
      out.push_back(ec == std::errc{} ? part : 0);
      std::size_t dot = text.find('.');
      if (dot == std::string_view::npos) break;
      text.remove_prefix(dot + 1);
    }
    return out;
  };
  return parts(a) < parts(b);
}

Routing learned_routing(const CommandShape& shape, std::string& reason) {
  if (!shape.subcommands.empty()) return Routing::Container;
  if (shape.flags & kAdmin) {
    reason =
        "an administrative command Santral does not know: run it on each shard directly (or "
        "declare it under commands: without the admin flag)";
  } else if ((shape.flags & kPubsub) || (shape.categories & kStateCategories)) {
    reason =
        "it changes pub/sub, transaction or connection state, which Santral keeps for each client "
        "from its own command table";
  } else if (shape.flags & kBlocking) {
    reason =
        "it can block, and a blocking command needs a connection of its own, which Santral lends "
        "only to the blocking commands of its own table";
  } else if (!keys_findable(shape)) {
    reason =
        "its keys cannot all be found from its key specs; declare them under commands: in "
        "Santral's config";
  } else if (shape.key_specs.empty() && (shape.flags & kWrite)) {
    reason = "a write that names no key would run on one shard only; run it on each shard directly";
  } else {
    return shape.key_specs.empty() ? Routing::Any : Routing::Keyed;
  }
  return Routing::Refused;
}

// ---- the snapshot and the archive ------------------------------------------------------------

const CommandSpec* LearnedCommands::find(std::string_view name) const {
  auto it = commands_.find(lower(name));
  return it == commands_.end() ? nullptr : it->second;
}

const CommandSpec* LearnedCommands::find_subcommand(const CommandSpec& container,
                                                    std::string_view sub) const {
  auto it = subcommands_.find(std::string(container.name) + "|" + lower(sub));
  return it == subcommands_.end() ? nullptr : it->second;
}

std::string_view LearnedCommands::summary(const CommandSpec& spec) const {
  auto it = summaries_.find(&spec);
  return it == summaries_.end() ? std::string_view{} : it->second;
}

// One learned command (with its subcommands), laid out once and never moved: the CommandSpec's
// views point into `shape` and the key spec arrays here.
struct CommandArchive::Entry {
  CommandShape shape;
  CommandOrigin origin;
  std::vector<KeySpec> keys;
  std::vector<std::vector<KeySpec>> sub_keys;
  std::vector<std::string> sub_reasons;
  std::vector<CommandSpec> subs;
  std::string reason;
  CommandSpec spec{};

  Entry(const CommandShape& from, CommandOrigin from_origin) : shape(from), origin(from_origin) {
    spec = make(shape, keys, reason);
    sub_keys.resize(shape.subcommands.size());
    sub_reasons.resize(shape.subcommands.size());
    for (std::size_t i = 0; i < shape.subcommands.size(); ++i)
      subs.push_back(make(shape.subcommands[i], sub_keys[i], sub_reasons[i]));
    spec.subcommands = subs;
  }

  CommandSpec make(const CommandShape& of, std::vector<KeySpec>& key_specs, std::string& why) {
    for (const auto& key : of.key_specs) {
      key_specs.push_back(key.spec);
      key_specs.back().keyword = key.keyword;
    }
    CommandSpec made{};
    made.name = of.name;
    made.arity = of.arity;
    made.flags = of.flags;
    made.categories = of.categories;
    made.id = kLearnedCommandId;
    made.key_specs = key_specs;
    made.routing = learned_routing(of, why);
    made.reason = why;
    made.origin = origin;
    return made;
  }
};

CommandArchive::CommandArchive() = default;
CommandArchive::~CommandArchive() = default;

const CommandSpec& CommandArchive::intern(const CommandShape& shape, CommandOrigin origin) {
  for (const auto& entry : entries_)
    if (entry->origin == origin && entry->shape == shape) return entry->spec;
  entries_.push_back(std::make_unique<Entry>(shape, origin));
  return entries_.back()->spec;
}

std::shared_ptr<const LearnedCommands> CommandArchive::build(const Sources& sources) {
  auto learned = std::make_shared<LearnedCommands>();
  learned->lowest_version_ = sources.lowest_version;
  auto add = [&](const CommandShape& shape, CommandOrigin origin) {
    if (shape.name.find('|') != std::string::npos) {
      std::string_view container = std::string_view(shape.name).substr(0, shape.name.find('|'));
      const CommandSpec* parent = find_command(container);
      if (parent == nullptr || parent->subcommands.empty() ||
          find_subcommand(*parent, shape.name.substr(container.size() + 1)) != nullptr)
        return;
      const CommandSpec& spec = intern(shape, origin);
      learned->subcommands_.emplace(shape.name, &spec);
      return;
    }
    const CommandSpec* builtin = find_command(shape.name);
    if (builtin != nullptr) {
      // A built-in container may have gained subcommands (CLIENT NO-TOUCH, OBJECT FREQ hidden).
      for (const auto& sub : shape.subcommands)
        if (!builtin->subcommands.empty() &&
            find_subcommand(*builtin, sub.name.substr(shape.name.size() + 1)) == nullptr) {
          const CommandSpec& spec = intern(sub, origin);
          learned->subcommands_.emplace(sub.name, &spec);
        }
      return;
    }
    const CommandSpec& spec = intern(shape, origin);
    learned->commands_.emplace(shape.name, &spec);
  };
  for (const auto& shape : sources.declared) add(shape, CommandOrigin::Config);
  if (sources.every_shard_answered && !sources.shards.empty()) {
    // Known to every shard: the shape of the first shard that lists it.
    std::vector<std::set<std::string, std::less<>>> names(sources.shards.size());
    for (std::size_t s = 0; s < sources.shards.size(); ++s)
      for (const auto& shape : sources.shards[s]) {
        names[s].insert(shape.name);
        for (const auto& sub : shape.subcommands) names[s].insert(sub.name);
      }
    auto everywhere = [&](const std::string& name) {
      return std::all_of(names.begin(), names.end(),
                         [&](const auto& known) { return known.contains(name); });
    };
    for (const auto& shape : sources.shards.front()) {
      if (!everywhere(shape.name) || learned->commands_.contains(shape.name)) continue;
      CommandShape common = shape;
      std::erase_if(common.subcommands, [&](const auto& sub) { return !everywhere(sub.name); });
      add(common, CommandOrigin::Shards);
    }
  }
  // Summaries, by the spec each name ended up with.
  auto note = [&](const CommandSpec* spec) {
    for (const auto& entry : entries_) {
      if (&entry->spec == spec && !entry->shape.summary.empty())
        learned->summaries_[spec] = entry->shape.summary;
      for (std::size_t i = 0; i < entry->subs.size(); ++i)
        if (&entry->subs[i] == spec && !entry->shape.subcommands[i].summary.empty())
          learned->summaries_[spec] = entry->shape.subcommands[i].summary;
    }
  };
  for (const auto& [name, spec] : learned->commands_) note(spec);
  for (const auto& [name, spec] : learned->subcommands_) note(spec);
  return learned;
}

}  // namespace santral::protocol
