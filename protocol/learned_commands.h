#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/command_table.h"
#include "protocol/reply_value.h"

namespace santral::protocol {

// Commands missing from the built-in table (protocol/command_table_data.cpp, Redis 7.0.15):
// those every shard's COMMAND INFO describes (HEXPIRE, WAITAOF, a module's FT.SEARCH, ...) and
// those the config declares (`commands:`). Each gets a CommandSpec routed by the built-in
// rules, decided here from its flags, categories and key specs:
//
//   subcommands              container (each subcommand decided alike)
//   admin                    refused: run it on each shard directly
//   pubsub, @connection,     refused: Santral keeps pub/sub and each client's connection
//   @transaction, blocking     state itself, from its own table
//   keys it cannot find      refused: declare them under commands:
//   keys                     keyed: on their shard when they share one, else CROSSSLOT
//   no key, a write          refused: it would run on one shard only
//   no key                   any: one shard that is up answers

// One key spec with its keyword owned (KeySpec::keyword views it once placed).
struct KeySpecShape {
  KeySpec spec;
  std::string keyword;
  bool operator==(const KeySpecShape& other) const;
};

// What a shard's COMMAND INFO says of one command, or what a `commands:` entry declares.
struct CommandShape {
  std::string name;  // lower case; "container|sub" for a subcommand
  std::int32_t arity = -1;
  std::uint32_t flags = 0;       // CommandFlag bits
  std::uint32_t categories = 0;  // category_bit() bits
  std::vector<KeySpecShape> key_specs;
  std::vector<CommandShape> subcommands;  // sorted by name
  std::string summary;                    // COMMAND DOCS' summary, where the shard has one
  bool operator==(const CommandShape&) const = default;
};

// COMMAND INFO's reply (RESP2 or RESP3, Redis 6's seven fields or Redis 7's ten) as shapes;
// an entry that cannot be read is skipped. Redis 6's first/last/step become a key spec.
std::vector<CommandShape> read_command_info(const ReplyValue& reply);
// COMMAND DOCS's reply: each summary is put on the shape of that name (subcommands too).
void read_command_docs(const ReplyValue& reply, std::vector<CommandShape>& shapes);
// A flag as COMMAND INFO prints it ("write", "readonly", ...); 0 for one Santral ignores.
std::uint32_t command_flag_named(std::string_view flag);
// Redis's implicit categories of a command by its flags (@write, @read, @admin @dangerous,
// @fast or @slow, ...), as Redis gives a module's commands.
std::uint32_t categories_of_flags(std::uint32_t flags);

// "7.0.15" < "7.2.4" < "8.0.0", by number; an empty version sorts last.
bool older_version(std::string_view a, std::string_view b);

// The routing a learned command gets, with the reason when it is refused (see the top).
Routing learned_routing(const CommandShape& shape, std::string& reason);

// One version of the commands learned: immutable once built, shared by every worker. The
// CommandSpecs it hands out live as long as the CommandArchive that made them.
class LearnedCommands {
 public:
  // Case-insensitive; nullptr when neither the shards nor the config know it.
  const CommandSpec* find(std::string_view name) const;
  // A learned subcommand of a built-in container (OBJECT FREQ hidden, CLIENT NO-TOUCH).
  const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view sub) const;
  // The lowest redis_version among the shards' INFO server; empty before any answered.
  const std::string& lowest_version() const { return lowest_version_; }
  std::size_t size() const { return commands_.size(); }
  // Every learned top-level command, by name.
  const std::map<std::string, const CommandSpec*, std::less<>>& commands() const {
    return commands_;
  }
  // COMMAND DOCS' summary of a learned command, or "".
  std::string_view summary(const CommandSpec& spec) const;
  // The same commands, subcommands and lowest version.
  bool same_as(const LearnedCommands& other) const {
    return commands_ == other.commands_ && subcommands_ == other.subcommands_ &&
           lowest_version_ == other.lowest_version_;
  }

 private:
  friend class CommandArchive;
  std::map<std::string, const CommandSpec*, std::less<>> commands_;
  std::map<std::string, const CommandSpec*, std::less<>> subcommands_;  // "container|sub"
  std::map<const CommandSpec*, std::string_view> summaries_;
  std::string lowest_version_;
};

// Makes LearnedCommands and keeps every CommandSpec it ever made: a request in flight, a
// reply slot and the per-command counters hold CommandSpec pointers, so a spec outlives the
// snapshot that handed it out. A command learned again with the same shape gets the same spec.
class CommandArchive {
 public:
  struct Sources {
    // Each shard's COMMAND INFO, in the map's order; a shard that has not answered is absent,
    // and then nothing is learned from the shards (a command must be known to every shard).
    std::vector<std::vector<CommandShape>> shards;
    bool every_shard_answered = false;
    std::vector<CommandShape> declared;  // `commands:`, which win over the shards'
    std::string lowest_version;
  };
  CommandArchive();
  ~CommandArchive();
  CommandArchive(const CommandArchive&) = delete;
  CommandArchive& operator=(const CommandArchive&) = delete;

  std::shared_ptr<const LearnedCommands> build(const Sources& sources);

 private:
  struct Entry;
  const CommandSpec& intern(const CommandShape& shape, CommandOrigin origin);

  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace santral::protocol
