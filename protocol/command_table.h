#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/command_categories.h"

namespace santral::protocol {

// How Santral routes a command. The rule of every command comes from
// protocol/command_rules.txt (reviewed by hand); see that file for what each one means.
enum class Routing : std::uint8_t {
  Keyed,
  Split,
  Broadcast,
  Any,
  Channel,
  Local,
  Stateful,
  Refused,
  Container,
};

// How the replies of a split or broadcast command become one reply.
enum class Merge : std::uint8_t {
  None,
  Ordered,     // MGET: values put back in the caller's key order
  Sum,         // DEL, EXISTS, DBSIZE: integers added
  AllOk,       // MSET, FLUSHDB: OK only if every shard said OK
  Concat,      // KEYS: arrays joined
  Same,        // SCRIPT LOAD: every shard must give the same answer
  Scan,        // SCAN: walks the shards in turn with one combined cursor
  Random,      // RANDOMKEY: one shard's non-nil answer
  Info,        // INFO: sections merged, keyspace summed
  SumPerName,  // PUBSUB NUMSUB: [name, count] pairs summed by name
  AnyOk,       // SCRIPT KILL: OK if any shard had something to kill
};

// Commands Santral answers itself, dispatched through router/commands/local_commands.cpp.
enum class LocalHandler : std::uint8_t {
  None,
  Ok,
  Ping,
  Echo,
  Quit,
  Hello,
  Auth,
  Select,
  Reset,
  Help,
  SeenScripts,
  CommandCount,
  ClientGetname,
  ClientSetname,
  ClientGetredir,
  ClientId,
  ClientInfo,
  ClientKill,
  ClientList,
  ClientNoEvict,
  ClientReply,
  ClientTracking,
  ClientTrackinginfo,
  ClientCaching,
  ClientUnblock,
  AclWhoami,
  AclList,
  AclGetuser,
  AclCat,
  AclDryrun,
  AclLog,
  AclUsers,
  // The cluster endpoint (cluster_endpoint: true): Santral's routers as a Redis Cluster's nodes.
  ClusterInfo,
  ClusterSlots,
  ClusterShards,
  ClusterNodes,
  ClusterMyid,
  ClusterMyshardid,
  ClusterKeyslot,
  ClusterCountkeysinslot,
  ClusterGetkeysinslot,
  Asking,
  SantralExplain,
  SantralReload,
  SantralReshard,
  SantralBalance,
  SantralAnalyze,
  SantralShardmap,
  SantralHotkeys,
  SantralSalt,
  SantralUnsalt,
  SantralMap,
  SantralRouters,
  SantralShard,
  SlowlogGet,
  SlowlogLen,
  SlowlogReset,
  SantralFailover,
  SantralClients,
  SantralSlowlog,
  Monitor,
};

// Commands a Redis Cluster client sends (CLUSTER SLOTS, ASKING, ...): answered only with the
// cluster endpoint on, refused as by a Redis without cluster support otherwise.
constexpr bool serves_cluster_clients(LocalHandler handler) {
  return handler >= LocalHandler::ClusterInfo && handler <= LocalHandler::Asking;
}

enum class StatefulKind : std::uint8_t { None, Transaction, Blocking, Subscribe };

// What a stateful command does with the client's pinned state, so that routing code tells
// MULTI from EXEC, or SSUBSCRIBE from SUBSCRIBE, by the table rather than by the name.
enum class StatefulVerb : std::uint8_t {
  None,
  // StatefulKind::Transaction
  Multi,
  Exec,
  Discard,
  Watch,
  Unwatch,
  // StatefulKind::Subscribe
  Subscribe,           // SUBSCRIBE
  ShardSubscribe,      // SSUBSCRIBE
  PatternSubscribe,    // PSUBSCRIBE
  Unsubscribe,         // UNSUBSCRIBE
  ShardUnsubscribe,    // SUNSUBSCRIBE
  PatternUnsubscribe,  // PUNSUBSCRIBE
  // StatefulKind::Blocking
  Block,  // BLPOP, BLMOVE, BZPOPMIN, ...: waits on its keys' shard
  Wait,   // WAIT: asks every shard
};

// What a command that can block answers when it times out, or when CLIENT UNBLOCK ... TIMEOUT
// ends it; None for a command that cannot block. A RESP3 client gets null for either nil.
enum class TimeoutReply : std::uint8_t {
  None,
  NilArray,  // BLPOP, BZPOPMIN, BLMPOP, XREAD, ...: *-1
  NilBulk,   // BLMOVE, BRPOPLPUSH: $-1
  Zero,      // WAIT: no replica confirmed, :0
};

// Commands that carry a Lua script (argument 1): its body, which Santral remembers, or its
// SHA1, which Santral can replace by the body when a shard does not have the script; or
// that empty the scripts (SCRIPT FLUSH), which Santral then forgets too.
enum class ScriptArg : std::uint8_t { None, Body, Sha, Flush };

// The features' columns (command_rules.txt's gather=, cross-write= and salted=): which rule of a
// feature a command follows. What each value does is the router's, in a table indexed by it.

// gather=: a read-only command whose keys may live on several shards: Santral reads each key
// from its shard and computes the answer itself, as Redis would.
enum class GatherAlgorithm : std::uint8_t {
  None,
  SetInter,
  SetInterCard,
  SetUnion,
  SetDiff,
  ZUnion,
  ZInter,
  ZInterCard,
  ZDiff,
  PfCount,
  Lcs,
};

// cross-write=: a write Santral runs across shards when `cross_shard_writes: allow` is set.
enum class CrossShardWrite : std::uint8_t {
  None,
  StoreSetInter,  // SINTERSTORE: read as SINTER, then write the destination
  StoreSetUnion,
  StoreSetDiff,
  StoreZUnion,
  StoreZInter,
  StoreZDiff,
  SetMove,   // SMOVE
  ListMove,  // LMOVE, RPOPLPUSH
  Rename,    // RENAME
  RenameNx,  // RENAMENX
  Copy,      // COPY
};

// salted=: what the command does on a salted counter; a command with None is refused there.
enum class SaltedOperation : std::uint8_t {
  None,
  Increment,       // INCR, INCRBY, DECR, DECRBY
  IncrementFloat,  // INCRBYFLOAT
  Get,
  Mget,
  CountKeys,  // EXISTS, DEL, UNLINK
  Set,
  Expire,
  Pexpire,
  Persist,
  BaseKey,  // TTL, PTTL: the key itself (sub-key 0)
  Strlen,
  HashIncrement,  // HINCRBY
  HashIncrementFloat,
  HashGet,
  HashGetAll,
  HashKeys,
  HashLength,
  HashExists,
};

// Flags copied from the backend's COMMAND output (those Santral acts on).
enum CommandFlag : std::uint32_t {
  kReadonly = 1u << 0,
  kWrite = 1u << 1,
  kDenyOom = 1u << 2,
  kAdmin = 1u << 3,
  kPubsub = 1u << 4,
  kNoscript = 1u << 5,
  kBlocking = 1u << 6,
  kLoading = 1u << 7,
  kStale = 1u << 8,
  kFast = 1u << 9,
  kNoMulti = 1u << 10,
  kMovableKeys = 1u << 11,
  kNoMandatoryKeys = 1u << 12,
};

// One Redis 7 key specification (see "Command key specifications" in the Redis docs):
// where the search for keys begins, and how the keys are found from there.
struct KeySpec {
  enum class Begin : std::uint8_t { Unknown, Index, Keyword };
  enum class Find : std::uint8_t { Unknown, Range, Keynum };
  enum Flag : std::uint16_t {
    kRO = 1u << 0,
    kRW = 1u << 1,
    kOW = 1u << 2,
    kRM = 1u << 3,
    kAccess = 1u << 4,
    kUpdate = 1u << 5,
    kInsert = 1u << 6,
    kDelete = 1u << 7,
    kNotKey = 1u << 8,
    kIncomplete = 1u << 9,
    kVariableFlags = 1u << 10,
  };

  Begin begin = Begin::Unknown;
  std::int16_t index = 0;      // Begin::Index
  std::string_view keyword;    // Begin::Keyword
  std::int16_t startfrom = 0;  // Begin::Keyword
  Find find = Find::Unknown;
  std::int16_t lastkey = 0;    // Find::Range
  std::int16_t keystep = 1;    // both
  std::int16_t limit = 0;      // Find::Range
  std::int16_t keynumidx = 0;  // Find::Keynum
  std::int16_t firstkey = 0;   // Find::Keynum
  std::uint16_t flags = 0;
};

// Where a command's spec comes from: the built-in table, every shard's COMMAND INFO, or the
// config's `commands:` (protocol/learned_commands.h).
enum class CommandOrigin : std::uint8_t { BuiltIn, Shards, Config };
// CommandSpec::id of a learned command: it has no bit in an ACL bitmap; its categories decide.
inline constexpr std::uint16_t kLearnedCommandId = 0xFFFF;

struct CommandSpec {
  std::string_view name;     // lower case; a subcommand is "container|sub"
  std::int32_t arity;        // as Redis: N exact, -N at least N (counting the name)
  std::uint32_t flags;       // CommandFlag bits
  std::uint32_t categories;  // category_bit(AclCategory) bits, from COMMAND's acl-categories
  std::uint16_t id;          // dense, over commands and subcommands: an ACL bitmap's index
  std::span<const KeySpec> key_specs;
  Routing routing;
  Merge merge;
  LocalHandler local;
  StatefulKind stateful;
  StatefulVerb verb;     // Stateful only
  TimeoutReply timeout;  // commands that can block
  ScriptArg script;
  GatherAlgorithm gather;
  CrossShardWrite cross_write;
  SaltedOperation salted;
  std::string_view reason;                   // Refused: what the client should do instead
  std::span<const CommandSpec> subcommands;  // Container only, sorted by name
  CommandOrigin origin = CommandOrigin::BuiltIn;

  bool has(CommandFlag flag) const { return (flags & flag) != 0; }
  bool in(AclCategory category) const { return (categories & category_bit(category)) != 0; }
  bool arity_ok(std::size_t argc) const {
    return arity >= 0 ? argc == static_cast<std::size_t>(arity)
                      : argc >= static_cast<std::size_t>(-arity);
  }
};

// EVAL, EVALSHA, FCALL and their _RO forms: they run a script or a function on a shard, which
// may take long (timeouts.script_ms instead of timeouts.request_ms).
inline bool runs_script(const CommandSpec& spec) {
  return spec.routing == Routing::Keyed && spec.in(AclCategory::Scripting);
}

// Case-insensitive lookup of a top-level command; nullptr if Redis 7.0 has no such command.
const CommandSpec* find_command(std::string_view name);
// Case-insensitive lookup of `sub` among a container's subcommands.
const CommandSpec* find_subcommand(const CommandSpec& container, std::string_view sub);
// The command's name as messages show it: upper case, a subcommand after a space ("CONFIG GET").
std::string upper_name(const CommandSpec& spec);
// Every top-level command, sorted by name.
std::span<const CommandSpec> all_commands();
// How many ids CommandSpec::id takes (commands and subcommands).
std::size_t command_id_count();

}  // namespace santral::protocol
