#include "router/catalog/command_catalog.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

namespace {

enum Step : std::uint32_t { kInfo, kCommands, kDocs };

std::string request(std::initializer_list<std::string_view> args) {
  std::string out;
  protocol::RespWriter(out).command(std::vector<std::string_view>(args));
  return out;
}

std::string redis_version(std::string_view info) {
  constexpr std::string_view kField = "redis_version:";
  auto at = info.find(kField);
  if (at == std::string_view::npos) return {};
  auto value = info.substr(at + kField.size());
  return std::string(value.substr(0, value.find_first_of("\r\n")));
}

// The names of `shapes` the built-in table lacks (commands and subcommands): whose summaries
// COMMAND DOCS is asked for.
std::vector<std::string> unknown_names(const std::vector<protocol::CommandShape>& shapes) {
  std::vector<std::string> names;
  for (const auto& shape : shapes) {
    const protocol::CommandSpec* builtin = protocol::find_command(shape.name);
    if (builtin == nullptr) {
      names.push_back(shape.name);
      continue;
    }
    for (const auto& sub : shape.subcommands)
      if (!builtin->subcommands.empty() &&
          protocol::find_subcommand(*builtin, sub.name.substr(shape.name.size() + 1)) == nullptr)
        names.push_back(sub.name);
  }
  return names;
}

}  // namespace

// The replies to one ask of one shard, in order: INFO server, COMMAND, then COMMAND DOCS.
class CommandCatalog::ReadingSink final : public ReplySink {
 public:
  ReadingSink(CommandCatalog& catalog, std::string address, std::uint64_t asked,
              BackendConnectionPtr connection)
      : catalog_(catalog),
        address_(std::move(address)),
        asked_(asked),
        connection_(std::move(connection)) {}

  void deliver(std::uint64_t /*slot*/, std::uint32_t step, std::string_view reply) override {
    if (failed_) return;
    if (protocol::is_error_frame(reply) && step != kDocs) {
      failed_ = true;
      return catalog_.failed(address_, asked_, reply);
    }
    switch (step) {
      case kInfo:
        return catalog_.took_info(address_, asked_, reply);
      case kCommands:
        return catalog_.took_commands(address_, asked_, reply, connection_.get());
      case kDocs:
        return catalog_.took_docs(address_, asked_, reply);
      default:
        return;
    }
  }

 private:
  CommandCatalog& catalog_;
  std::string address_;
  std::uint64_t asked_;
  BackendConnectionPtr connection_;
  bool failed_ = false;
};

void CommandCatalog::follow(ConnectionPool& pool, const placement::Topology& topology,
                            Publish publish) {
  publish_ = std::move(publish);
  declared_ = topology.config->commands;
  const auto& map = *topology.map;
  shards_.clear();
  for (std::size_t s = 0; s < map.shard_count(); ++s)
    shards_.push_back(map.shard(s).address.text());
  std::erase_if(readings_, [this](const auto& entry) {
    return std::find(shards_.begin(), shards_.end(), entry.first) == shards_.end();
  });
  auto profile = pool.default_profile();
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    BackendConnectionPtr connection(&pool.shared(s, profile, 0));
    std::string address = shards_[s];
    BackendConnection* raw = connection.get();
    connection->set_on_ready([this, raw, address] { read(*raw, address); });
    auto& reading = readings_[address];
    if (!reading.answered && !reading.in_flight && connection->usable()) read(*raw, address);
  }
  rebuild();
}

void CommandCatalog::read(BackendConnection& connection, const std::string& address) {
  if (std::find(shards_.begin(), shards_.end(), address) == shards_.end()) return;
  auto& reading = readings_[address];
  reading.asked = ++asks_;
  reading.in_flight = true;
  ReplySinkPtr sink(
      new ReadingSink(*this, address, reading.asked, BackendConnectionPtr(&connection)));
  static const std::string info = request({"INFO", "server"});
  static const std::string commands = request({"COMMAND"});
  connection.send(info, sink, 0, kInfo);
  connection.send(commands, sink, 0, kCommands);
}

void CommandCatalog::took_info(const std::string& address, std::uint64_t asked,
                               std::string_view reply) {
  auto it = readings_.find(address);
  if (it == readings_.end() || it->second.asked != asked) return;
  protocol::ReplyValue value;
  if (protocol::parse_reply(reply, value)) it->second.version = redis_version(value.text);
}

void CommandCatalog::took_commands(const std::string& address, std::uint64_t asked,
                                   std::string_view reply, BackendConnection* connection) {
  auto it = readings_.find(address);
  if (it == readings_.end() || it->second.asked != asked) return;
  auto& reading = it->second;
  protocol::ReplyValue value;
  if (!protocol::parse_reply(reply, value)) return failed(address, asked, "unreadable reply");
  reading.commands = protocol::read_command_info(value);
  reading.answered = true;
  auto names = unknown_names(reading.commands);
  // COMMAND DOCS (Redis 7): the summaries EXPLAIN shows; the reading is complete without them.
  if (names.empty() || connection == nullptr || protocol::older_version(reading.version, "7")) {
    reading.in_flight = false;
    return rebuild();
  }
  std::vector<std::string_view> args = {"COMMAND", "DOCS"};
  for (const auto& name : names) args.push_back(name);
  std::string docs;
  protocol::RespWriter(docs).command(args);
  ReplySinkPtr sink(new ReadingSink(*this, address, asked, nullptr));
  connection->send(docs, sink, 0, kDocs);
}

void CommandCatalog::took_docs(const std::string& address, std::uint64_t asked,
                               std::string_view reply) {
  auto it = readings_.find(address);
  if (it == readings_.end() || it->second.asked != asked) return;
  protocol::ReplyValue value;
  if (!reply.empty() && reply.front() != '-' && protocol::parse_reply(reply, value))
    protocol::read_command_docs(value, it->second.commands);
  it->second.in_flight = false;
  rebuild();
}

void CommandCatalog::failed(const std::string& address, std::uint64_t asked,
                            std::string_view reply) {
  auto it = readings_.find(address);
  if (it == readings_.end() || it->second.asked != asked) return;
  it->second.in_flight = false;
  // A shard that is down is read again when it is back; one that refuses (an ACL user without
  // COMMAND) keeps its commands unlearned, and says why once.
  std::string why = protocol::one_line(reply.substr(1, reply.size() > 3 ? reply.size() - 3 : 0));
  if (why.find("santral:") == std::string::npos)
    spdlog::warn(
        "shard {} did not say what it knows (INFO server, COMMAND): {}; commands missing from "
        "Santral's table are not learned until every shard answers",
        address, why);
}

void CommandCatalog::rebuild() {
  protocol::CommandArchive::Sources sources;
  sources.declared = declared_;
  sources.every_shard_answered = !shards_.empty();
  for (const auto& address : shards_) {
    const auto& reading = readings_[address];
    if (!reading.answered) {
      sources.every_shard_answered = false;
      continue;
    }
    sources.shards.push_back(reading.commands);
    if (sources.lowest_version.empty() ||
        protocol::older_version(reading.version, sources.lowest_version))
      sources.lowest_version = reading.version;
  }
  auto next = archive_.build(sources);
  if (last_ && last_->same_as(*next)) return;
  std::vector<std::string_view> names;
  for (const auto& [name, spec] : next->commands()) names.push_back(name);
  if (sources.every_shard_answered)
    spdlog::info(
        "commands Santral's table lacks, learned from the shards and commands: {} [{}]; "
        "the shards' lowest version: {}",
        names.size(), fmt::join(names, ", "),
        next->lowest_version().empty() ? "not known yet" : next->lowest_version());
  last_ = next;
  if (publish_) publish_(std::move(next));
}

}  // namespace santral::router
