// The merges whose replies are small and flat: counts, statuses, lists of names.
#include <random>
#include <unordered_map>

#include "protocol/reply_encoder.h"
#include "router/merge/collecting_merge.h"
#include "router/merge/merge_kinds.h"

namespace santral::router {
namespace {

using protocol::ReplyValue;
using protocol::RespWriter;
using Type = ReplyValue::Type;

bool is_integer(const ReplyValue& value) {
  return value.type == Type::Integer;
}

bool is_list(const ReplyValue& value) {
  return value.type == Type::Array || value.type == Type::Set;
}

bool is_text(const ReplyValue& value) {
  return value.type == Type::BulkString || value.type == Type::SimpleString ||
         value.type == Type::VerbatimString;
}

void append_aggregate_header(std::string& out, Type type, std::size_t count) {
  out.push_back(static_cast<char>(type));
  out.append(std::to_string(count));
  out.append("\r\n", 2);
}

// DEL, EXISTS, DBSIZE...: the integers added.
class SumMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (auto failed = first_failure(is_integer)) return write_failure(*failed, out);
    std::int64_t total = 0;
    for (const FragmentReply& reply : replies()) {
      if (__builtin_add_overflow(total, reply.value.integer, &total))
        return RespWriter(out).error(sum_overflow_error(brief().command));
    }
    RespWriter(out).integer(total);
  }
};

// MSET, FLUSHDB...: fragment 0's answer if no shard failed, else one error naming them all.
class AllOkMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (write_failed_shards(accepts_any, out)) return;
    out.append(replies()[0].frame);
  }
};

// KEYS, PUBSUB CHANNELS, SLOWLOG GET: the lists joined in fragment order, as fragment 0's
// aggregate type (array, or a RESP3 set).
class ConcatMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (auto failed = first_failure(is_list)) return write_failure(*failed, out);
    std::size_t count = 0;
    std::size_t bytes = 0;
    for (const FragmentReply& reply : replies()) {
      count += reply.value.elements.size();
      bytes += reply.frame.size();
    }
    out.reserve(out.size() + bytes + 16);
    append_aggregate_header(out, value(0).type, count);
    for (const FragmentReply& reply : replies())
      for (const ReplyValue& element : reply.value.elements) protocol::encode_reply(element, out);
  }
};

// A reply in a few words, for an error that shows what shards said.
std::string short_answer(const ReplyValue& value) {
  constexpr std::size_t kLongest = 40;
  std::string text;
  switch (value.type) {
    case Type::Integer:
      text = std::to_string(value.integer);
      break;
    case Type::Boolean:
      text = value.integer != 0 ? "true" : "false";
      break;
    case Type::Null:
      text = "nil";
      break;
    case Type::Array:
    case Type::Set:
    case Type::Push:
      text = fmt::format("{} elements", value.elements.size());
      break;
    case Type::Map:
    case Type::Attribute:
      text = fmt::format("{} pairs", value.elements.size() / 2);
      break;
    case Type::VerbatimString:
      text = one_line(value.text.substr(4));
      break;
    default:
      text = one_line(value.text);
      break;
  }
  if (text.size() > kLongest) {
    text.resize(kLongest);
    text += "...";
  }
  return text;
}

// SCRIPT LOAD, FUNCTION LOAD: every shard must give the same answer (the script's SHA1, the
// library's name); if they do not, the shards' scripts have drifted apart.
class SameMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (write_failed_shards(accepts_any, out)) return;
    const std::string& first = replies()[0].frame;
    std::vector<std::uint32_t> different;
    for (std::uint32_t i = 1; i < replies().size(); ++i)
      if (replies()[i].frame != first) different.push_back(i);
    if (different.empty()) {
      out.append(first);
      return;
    }
    // Fragment 0's answer, then up to three that differ from it.
    constexpr std::size_t kShown = 3;
    std::vector<std::string> answers;
    answers.push_back(fmt::format("shard '{}': {}", shard(0), short_answer(value(0))));
    for (std::size_t k = 0; k < different.size() && k < kShown; ++k) {
      const std::uint32_t i = different[k];
      answers.push_back(fmt::format("shard '{}': {}", shard(i), short_answer(value(i))));
    }
    if (different.size() > kShown)
      answers.push_back(fmt::format("and {} more shard(s)", different.size() - kShown));
    RespWriter(out).error(answered_differently_error(brief().command, answers));
  }
};

// SCRIPT KILL, FUNCTION KILL: the script ran on one shard at most; the first shard that did
// not answer with an error (NOTBUSY...) speaks for all.
class AnyOkMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    for (const FragmentReply& reply : replies()) {
      if (reply.parsed && !reply.value.is_error()) {
        out.append(reply.frame);
        return;
      }
    }
    write_failure(*first_failure(accepts_any), out);
  }
};

std::minstd_rand& random_engine() {
  thread_local std::minstd_rand engine{std::random_device{}()};
  return engine;
}

// RANDOMKEY: a key from one of the shards that have any, each such shard equally likely.
// Only when none has a key do errors matter: the first one, or else "no key" (a null, as the
// shards sent it).
class RandomMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    std::vector<std::uint32_t> with_key;
    for (std::uint32_t i = 0; i < replies().size(); ++i)
      if (replies()[i].parsed && value(i).type == Type::BulkString) with_key.push_back(i);
    if (!with_key.empty()) {
      std::uniform_int_distribution<std::size_t> pick(0, with_key.size() - 1);
      out.append(replies()[with_key[pick(random_engine())]].frame);
      return;
    }
    const auto is_null = [](const ReplyValue& value) { return value.type == Type::Null; };
    if (auto failed = first_failure(is_null)) return write_failure(*failed, out);
    out.append(replies()[0].frame);
  }
};

bool is_name_counts(const ReplyValue& value) {
  if (value.type != Type::Array && value.type != Type::Map) return false;
  const std::vector<ReplyValue>& elements = value.elements;
  if (elements.size() % 2 != 0) return false;
  for (std::size_t k = 0; k < elements.size(); k += 2)
    if (!is_text(elements[k]) || !is_integer(elements[k + 1])) return false;
  return true;
}

// PUBSUB NUMSUB: [name, count, name, count...] (or a RESP3 map) from each shard; counts
// added per name. Every shard got the same names, but a name the client asked for twice is
// listed twice, so the n-th time a name appears is matched with its n-th time elsewhere.
class SumPerNameMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  struct NameCount {
    const ReplyValue* name;
    std::int64_t count;
  };

  void merge(std::string& out) override {
    if (auto failed = first_failure(is_name_counts)) return write_failure(*failed, out);
    std::vector<NameCount> merged;
    std::unordered_map<std::string_view, std::vector<std::size_t>> places;  // name -> merged[]
    std::unordered_map<std::string_view, std::size_t> seen;  // times in this fragment
    for (const FragmentReply& reply : replies()) {
      seen.clear();
      const std::vector<ReplyValue>& elements = reply.value.elements;
      for (std::size_t k = 0; k < elements.size(); k += 2) {
        const ReplyValue& name = elements[k];
        const std::size_t nth = seen[name.text]++;
        std::vector<std::size_t>& at = places[name.text];
        if (nth == at.size()) {
          at.push_back(merged.size());
          merged.push_back({&name, 0});
        }
        std::int64_t& count = merged[at[nth]].count;
        if (__builtin_add_overflow(count, elements[k + 1].integer, &count))
          return RespWriter(out).error(sum_overflow_error(brief().command));
      }
    }
    const Type type = value(0).type;
    append_aggregate_header(out, type, type == Type::Map ? merged.size() : merged.size() * 2);
    for (const NameCount& entry : merged) {
      protocol::encode_reply(*entry.name, out);
      RespWriter(out).integer(entry.count);
    }
  }
};

}  // namespace

std::unique_ptr<ReplyMerge> make_sum_merge(MergeBrief brief) {
  return std::make_unique<SumMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_all_ok_merge(MergeBrief brief) {
  return std::make_unique<AllOkMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_concat_merge(MergeBrief brief) {
  return std::make_unique<ConcatMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_same_merge(MergeBrief brief) {
  return std::make_unique<SameMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_any_ok_merge(MergeBrief brief) {
  return std::make_unique<AnyOkMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_random_merge(MergeBrief brief) {
  return std::make_unique<RandomMerge>(std::move(brief));
}
std::unique_ptr<ReplyMerge> make_sum_per_name_merge(MergeBrief brief) {
  return std::make_unique<SumPerNameMerge>(std::move(brief));
}

}  // namespace santral::router
