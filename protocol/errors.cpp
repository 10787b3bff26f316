#include "protocol/errors.h"

#include <array>

namespace santral::protocol {
namespace {

struct Entry {
  ClientError error;
  std::string_view format;
};

// Arguments, by position, are documented where each error is raised.
constexpr Entry kMessages[] = {
    {ClientError::InvalidMultibulkLength, "ERR Protocol error: invalid multibulk length"},
    {ClientError::TooManyArguments,
     "ERR Protocol error: invalid multibulk length ({} arguments exceed this server's "
     "limits.max_args of {}); send fewer arguments per command"},
    {ClientError::InvalidBulkLength, "ERR Protocol error: invalid bulk length"},
    {ClientError::BulkTooLarge,
     "ERR Protocol error: invalid bulk length ({} bytes exceed this server's "
     "limits.max_bulk_bytes of {})"},
    {ClientError::ExpectedDollar, "ERR Protocol error: expected '$', got '{}'"},
    {ClientError::TooBigCountString, "ERR Protocol error: too big mbulk count string"},
    {ClientError::TooBigBulkCountString, "ERR Protocol error: too big bulk count string"},
    {ClientError::TooBigInline,
     "ERR Protocol error: too big inline request (over limits.max_inline_bytes of {} bytes)"},
    {ClientError::UnbalancedQuotes, "ERR Protocol error: unbalanced quotes in request"},
    {ClientError::UnknownCommand, "ERR unknown command '{}', with args beginning with: {}"},
    {ClientError::UnknownSubcommand, "ERR unknown subcommand '{}'. Try {} HELP."},
    {ClientError::WrongArity, "ERR wrong number of arguments for '{}' command"},
    {ClientError::NoKeysFound,
     "ERR santral: cannot find the keys of '{}' in its arguments; check the command's syntax "
     "(a numkeys argument must be a number that matches the keys given)"},
    {ClientError::CrossShard,
     "CROSSSLOT Keys in request don't hash to the same shard: {}. Keys that share a hash tag "
     "(the part inside {{...}}, e.g. user:{{42}}:name and user:{{42}}:email) always live "
     "together"},
    {ClientError::Refused, "ERR santral: '{}' is not available through Santral: {}"},
    {ClientError::NotYetSupported,
     "ERR santral: '{}' is not supported yet ({} commands); run it on a shard directly"},
    {ClientError::ClusterSupportDisabled,
     "ERR This instance has cluster support disabled (Santral presents one server; set "
     "cluster_endpoint: true in its config to serve Redis Cluster clients)"},
    {ClientError::ClusterInvalidSlot, "ERR Invalid slot"},
    {ClientError::ClusterInvalidCount, "ERR Invalid slot or number of keys"},
    {ClientError::SyntaxError, "ERR syntax error"},
    {ClientError::NotAnInteger, "ERR value is not an integer or out of range"},
    {ClientError::SelectInvalid,
     "ERR DB index is out of range (Santral serves databases 0 to {}; see `databases` in its "
     "config)"},
    {ClientError::NoProto, "NOPROTO sorry, this protocol version is not supported"},
    {ClientError::ProtocolVersionNotInteger,
     "ERR Protocol version is not an integer or out of range"},
    {ClientError::HelloOptionSyntax, "ERR Syntax error in HELLO option '{}'"},
    {ClientError::HelloNoAuth,
     "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
     "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
     "RESP protocol version at the same time"},
    {ClientError::SubscribedMode,
     "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
     "allowed in this context"},
    // Redis's words: a MONITOR client is a replica to Redis.
    {ClientError::MonitorKeyspace,
     "ERR Replica can't interact with the keyspace (this connection sent MONITOR: RESET or a new "
     "connection runs commands)"},
    {ClientError::TrackingRedirectMissing, "ERR The client ID you want redirect to does not exist"},
    {ClientError::TrackingRedirectTwice, "ERR A client can only redirect to a single other client"},
    {ClientError::TrackingPrefixNeedsBcast, "ERR PREFIX option requires BCAST mode to be enabled"},
    {ClientError::TrackingSwitchBcast,
     "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
     "re-enabling it with a different mode."},
    {ClientError::TrackingBcastOptions, "ERR OPTIN and OPTOUT are not compatible with BCAST"},
    {ClientError::TrackingOptInAndOptOut, "ERR You can't specify both OPTIN mode and OPTOUT mode"},
    {ClientError::TrackingSwitchOptMode,
     "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
     "re-enabling it with a different mode."},
    {ClientError::TrackingPrefixOverlapsExisting,
     "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must "
     "not overlap."},
    {ClientError::TrackingPrefixOverlapsGiven,
     "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client "
     "must not overlap."},
    {ClientError::CachingNotInMode,
     "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
     "OPTOUT mode enabled"},
    {ClientError::CachingYesNotOptIn,
     "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."},
    {ClientError::CachingNoNotOptOut,
     "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."},
    {ClientError::ClientNotFound, "ERR No such client"},
    {ClientError::InvalidClientName,
     "ERR Client names cannot contain spaces, newlines or special characters."},
    {ClientError::InvalidClientId, "ERR Invalid client ID"},
    {ClientError::KillClientId, "ERR client-id should be greater than 0"},
    {ClientError::UnknownClientType, "ERR Unknown client type '{}'"},
    {ClientError::KillNoSuchUser, "ERR No such user '{}'"},
    {ClientError::UnblockReason, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"},
    {ClientError::Unblocked, "UNBLOCKED client unblocked via CLIENT UNBLOCK"},
    {ClientError::MultiNested, "ERR MULTI calls can not be nested"},
    {ClientError::ExecWithoutMulti, "ERR EXEC without MULTI"},
    {ClientError::DiscardWithoutMulti, "ERR DISCARD without MULTI"},
    {ClientError::WatchInMulti, "ERR WATCH inside MULTI is not allowed"},
    {ClientError::ExecAbort, "EXECABORT Transaction discarded because of previous errors."},
    // EXEC itself refused before it ran (Redis's execCommandAbort): the transaction is over.
    {ClientError::ExecRefused, "EXECABORT Transaction discarded because of: {}"},
    {ClientError::TransactionCrossShard,
     "CROSSSLOT Keys in request don't hash to the same shard: this transaction runs on shard "
     "'{}', but '{}' is on shard '{}'. Every key of a transaction must live on one shard: give "
     "them one hash tag (e.g. order:{{42}}:items and order:{{42}}:total); EXEC will now fail"},
    {ClientError::NotInTransaction,
     "ERR santral: '{}' cannot be queued in a transaction through Santral ({}); EXEC will now "
     "fail"},
    {ClientError::NotAllowedInMulti, "ERR Command not allowed inside a transaction"},
    {ClientError::InvalidCursor, "ERR invalid cursor"},
    {ClientError::PinnedConnection,
     "ERR santral: {} cannot change the database or protocol while WATCH or MULTI holds a "
     "connection; EXEC, DISCARD or UNWATCH first"},
    {ClientError::AuthNotConfigured,
     "ERR AUTH <password> called without any password configured for the default user. Are "
     "you sure your configuration is correct?"},
    {ClientError::AuthFailed, "WRONGPASS invalid username-password pair or user is disabled."},
    {ClientError::NoAuth, "NOAUTH Authentication required."},
    {ClientError::MaxClients,
     "ERR max number of clients reached (limits.max_clients is {}); try again later"},
    {ClientError::QueryBufferLimit,
     "ERR Protocol error: this client's unfinished request holds {} bytes, more than "
     "limits.max_query_buffer_bytes ({}); closing the connection"},
    {ClientError::AuthTimeout,
     "ERR not authenticated within {} ms (limits.auth_timeout_ms); closing the connection: "
     "send AUTH first"},
    {ClientError::NoPermCommand, "NOPERM this user has no permissions to run the '{}' command"},
    {ClientError::NoPermKey,
     "NOPERM this user has no permissions to access one of the keys used as arguments"},
    {ClientError::NoPermChannel,
     "NOPERM this user has no permissions to access one of the channels used as arguments"},
    {ClientError::AclUnknownCategory, "ERR Unknown category '{}'"},
    {ClientError::AclUserNotFound, "ERR User '{}' not found"},
    {ClientError::AclCommandNotFound, "ERR Command '{}' not found"},
    {ClientError::AclLogCount, "ERR value is not an integer or out of range"},
    // ACL DRYRUN's answers are bulk strings, without a prefix.
    {ClientError::DryrunCommand, "This user has no permissions to run the '{}' command"},
    {ClientError::DryrunKey, "This user has no permissions to access the '{}' key"},
    {ClientError::DryrunChannel, "This user has no permissions to access the '{}' channel"},
    {ClientError::MergeUnexpectedReply, "ERR santral: shard '{}' sent an unexpected reply to {}"},
    {ClientError::MergeNoReply, "ERR santral: shard '{}' did not answer {}"},
    {ClientError::MergeNoShard, "ERR santral: {} was sent to no shard"},
    {ClientError::MergeNoRule,
     "ERR santral: {} has no rule to merge the replies of several shards"},
    {ClientError::MergeInconsistentPlan,
     "ERR santral: internal error while merging the replies to {}"},
    {ClientError::MergeFailedOnShards, "ERR santral: {} failed on shard(s) {}: {}"},
    {ClientError::MergeBusyOnShards, "{} (santral: {} was not run: shard(s) {} busy)"},
    {ClientError::MergeBusyOnSomeShards,
     "{} (santral: {} was not run on shard(s) {}, busy; the other shards ran it)"},
    {ClientError::MergeAnsweredDifferently, "ERR santral: shards answered {} differently ({})"},
    {ClientError::MergeSumOverflow,
     "ERR santral: the shards' replies to {} add up to more than a 64-bit integer holds"},
    {ClientError::MergeTooLarge,
     "ERR santral: {} reads keys from several shards and their replies exceed "
     "limits.max_merge_bytes ({} bytes), so Santral did not merge them; give the keys one hash "
     "tag (e.g. {{user:42}}:a and {{user:42}}:b) so that one shard answers, or raise "
     "limits.max_merge_bytes"},
    {ClientError::WrongType, "WRONGTYPE Operation against a key holding the wrong kind of value"},
    {ClientError::WeightNotFloat, "ERR weight value is not a float"},
    {ClientError::LimitNegative, "ERR LIMIT can't be negative"},
    {ClientError::HllInvalid, "WRONGTYPE Key is not a valid HyperLogLog string value."},
    {ClientError::HllCorrupted, "INVALIDOBJ Corrupted HLL object detected"},
    {ClientError::LcsNotStrings, "ERR The specified keys must contain string values"},
    {ClientError::LcsLenAndIdx,
     "ERR If you want both the length and indexes, please just use IDX."},
    {ClientError::LcsTooLarge,
     "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"},
    {ClientError::NoSuchKey, "ERR no such key"},
    {ClientError::CrossShardCopyDb,
     "ERR santral: COPY ... DB between keys on different shards is not supported; copy within "
     "the database, or give the keys one hash tag"},
    {ClientError::ScanCursorTooLarge,
     "ERR santral: shard '{}' returned the SCAN cursor {}, too large to combine with a shard "
     "number (Santral needs shard cursors below 2^54); scan that shard directly"},
    {ClientError::WaitUnexpectedReply, "ERR santral: unexpected reply to WAIT"},
    {ClientError::SaltedCommand,
     "ERR santral: '{}' is a salted counter spread over {} sub-keys, so {} cannot run on it; "
     "it takes INCR, INCRBY, DECR, DECRBY, INCRBYFLOAT, GET, MGET, STRLEN, SET, EXISTS, DEL, "
     "UNLINK, EXPIRE, PEXPIRE, PERSIST, TTL and PTTL, and on a hash HINCRBY, HINCRBYFLOAT, HGET, "
     "HGETALL, HKEYS, HLEN and HEXISTS. Run SANTRAL UNSALT {} first to use other commands"},
    {ClientError::SaltedInTransaction,
     "ERR santral: '{}' is a salted counter whose sub-keys live on several shards, so it "
     "cannot be used inside MULTI; use it outside the transaction, or SANTRAL UNSALT it"},
    {ClientError::SaltedNotNumber,
     "ERR santral: salted counter '{}' holds a value that is not a number in its sub-key "
     "'{}'; SET the counter to a number or DEL it"},
    {ClientError::SaltedOverflow,
     "ERR santral: the sub-keys of salted counter '{}' add up to more than a 64-bit integer "
     "holds"},
    {ClientError::SaltCount, "ERR santral: the salt count must be an integer from {} to {}"},
    {ClientError::SaltSyntax,
     "ERR santral: syntax error; use SANTRAL SALT <key> <n> [REPLY estimate|exact]"},
    {ClientError::NotSalted,
     "ERR santral: '{}' is not salted; SANTRAL HOTKEYS shows which keys are"},
    {ClientError::AlreadySalted,
     "ERR santral: '{}' is already salted over {} sub-keys; SANTRAL UNSALT it first to change "
     "that"},
    {ClientError::SaltStateFile,
     "ERR santral: '{}' was not salted: cannot keep it in {}; the key stays as it was (make "
     "the file writable, or set hotkeys.state_file to a writable place)"},
    {ClientError::UnsaltFold,
     "ERR santral: '{}' is no longer salted, but folding its sub-key '{}' back failed ({}); "
     "{}"},
    {ClientError::HotKeysSyntax, "ERR santral: syntax error; use SANTRAL HOTKEYS [COUNT <n>]"},
    {ClientError::ReloadRejected, "ERR santral: reload rejected, the old config keeps serving: {}"},
    {ClientError::ReshardSyntax,
     "ERR santral: syntax error; use SANTRAL RESHARD PLAN|APPROVE|STATUS|ABORT"},
    {ClientError::ReshardNothingPlanned,
     "ERR santral: no move is planned; edit the config so that keys change owner and reload "
     "(SANTRAL RESHARD PLAN shows what a reload would move)"},
    {ClientError::ReshardNotMoving, "ERR santral: no move is planned or running (state {})"},
    {ClientError::ReshardBusy, "ERR santral: a move is already {}; wait for it or ABORT it first"},
    {ClientError::ReshardStateFile,
     "ERR santral: cannot keep the move in {}: {}; nothing changed, the map in force keeps "
     "serving (make the file writable, or set resharding.state_file to a writable place)"},
    {ClientError::BalanceSyntax,
     "ERR santral: syntax error; use SANTRAL BALANCE PLAN [BY ops|keys|bytes] [RATIO <r>=1.2] "
     "[SAMPLES <n>] [WINDOW <ms>]"},
    {ClientError::BalanceWhileMoving,
     "ERR santral: a move is {}; balance once it is over (SANTRAL RESHARD STATUS)"},
    {ClientError::AnalyzeSyntax,
     "ERR santral: syntax error; use SANTRAL ANALYZE <namespace | key glob> [SECONDS <n>=10] "
     "[SAMPLE <rate>=0.05] [KEY <field | regex>] [FORMAT text|json]"},
    {ClientError::AnalyzeBusy,
     "ERR santral: an analysis is already running on this router; wait for it (at most its "
     "SECONDS) and ask again"},
    {ClientError::AnalyzeTarget, "ERR santral: cannot analyze: {}"},
    {ClientError::FailoverSyntax, "ERR santral: syntax error; use SANTRAL FAILOVER ACCEPT <shard>"},
    {ClientError::FailoverNothingToAccept,
     "ERR santral: nothing to accept for shard '{}': {}; SANTRAL SHARDMAP shows the shards and "
     "any lost_writes line"},
    {ClientError::NotInFleet,
     "ERR santral: this router is not in a fleet (its config has no cluster:); edit its file "
     "and SANTRAL RELOAD instead"},
    {ClientError::MapPushSyntax,
     "ERR santral: syntax error; use SANTRAL MAP PUSH <config text> (santral map push FILE "
     "sends a file)"},
    {ClientError::UserRateLimited,
     "ERR santral: user '{}' is over its limits.requests_per_s of {} (burst {}); the request was "
     "not run, retry it later"},
    {ClientError::NamespaceRateLimited,
     "ERR santral: namespace '{}' is over its limits.requests_per_s of {} (burst {}); the "
     "request was not run, retry it later"},
    {ClientError::UserConnectionLimit,
     "ERR santral: user '{}' already has {} connections to this router, its "
     "limits.max_connections; close one before logging in with another"},
    {ClientError::UserPipelineLimit,
     "ERR santral: user '{}' may have {} requests waiting for replies on one connection "
     "(limits.max_pipeline); the request was not run, read the replies before sending more"},
    {ClientError::SlowlogCount, "ERR count should be greater than or equal to -1"},
    {ClientError::ShardSlowlogSyntax,
     "ERR santral: syntax error; use SANTRAL SHARD SLOWLOG GET [count] | LEN | RESET (the "
     "shards' own slow logs; SLOWLOG alone is Santral's)"},
    {ClientError::RoutersSilent,
     "ERR santral: {} done on the routers that answered ({}); {} did not answer, and may still "
     "do it when it does: run it again, or through that router (its own view: SANTRAL CLIENTS "
     "LOCAL, SANTRAL SLOWLOG LOCAL)"},
    {ClientError::ClientsLocalSyntax,
     "ERR santral: syntax error; use SANTRAL CLIENTS LOCAL [LIST [filters] | KILL filters] "
     "(this router's clients; CLIENT LIST and CLIENT KILL cover the fleet)"},
    {ClientError::SlowlogLocalSyntax,
     "ERR santral: syntax error; use SANTRAL SLOWLOG LOCAL GET [count] | LEN | RESET (this "
     "router's slow log; SLOWLOG covers the fleet)"},
    {ClientError::MapProposal, "ERR santral: the map was not proposed: {}"},
    {ClientError::FleetOutOfTouch,
     "CLUSTERDOWN santral: this router has not confirmed its lease with etcd in time ({} ms "
     "late) and may have been left out of the fleet; it serves again once etcd answers, or use "
     "another router"},
    {ClientError::FleetMapRefused,
     "CLUSTERDOWN santral: the fleet moved on to map version {}, which this router cannot take "
     "(its log says why); keys may have moved, so it serves nothing until it takes a map: "
     "upgrade this router, or push one it reads with `santral map push FILE`, or use another "
     "router"},
    {ClientError::FleetUnsaltUnconfirmed,
     "ERR santral: '{}' is no longer salted here, but not every router of the fleet confirmed "
     "it stopped writing its sub-keys ({}); they are left unfolded and still hold part of the "
     "count: SANTRAL SALT the key again, then UNSALT it once every router answers"},
    {ClientError::ProbeWorkerSilent,
     "worker {} did not answer within {} ms: its event loop is blocked or overloaded"},
    {ClientError::ProbeStarting,
     "starting: shard '{}' is {}; ready once every worker reaches the primary of every shard"},
    {ClientError::ProbeShardDown,
     "shard '{}' is {} (GET /shards says why); ready again once every worker reaches its "
     "primary"},
    {ClientError::ProbeNotJoined,
     "not in its fleet: etcd has not confirmed its lease since it started or lost it; ready "
     "once it has joined and serves the fleet's map"},
    {ClientError::ProbeOutOfTouch,
     "out of touch with etcd: its lease was not confirmed in time ({} ms late), so it may have "
     "been left out of the fleet; ready again once etcd answers"},
    {ClientError::ProbeMapRefused,
     "refuses the fleet's map version {} (its log says why) and serves nothing until it takes "
     "a map"},
    {ClientError::ProbeMapBehind,
     "serves map version {} while the fleet's is {} (its log says why when it refused it); "
     "ready once it serves that one"},
    {ClientError::ProbeDraining,
     "shutting down: it serves on for shutdown.ready_delay_ms ({} ms), then closes its "
     "listeners and drains"},
    {ClientError::MoveFailed,
     "TRYAGAIN santral: key '{}' is moving from shard '{}' to '{}' and could not be moved "
     "({}); the command did not run, retry it"},
    {ClientError::MoveChangedUnderneath,
     "TRYAGAIN santral: the shard map changed while this command waited (a move started, ended "
     "or was aborted); it did not run, retry it"},
    {ClientError::SlotScanMapChanged,
     "TRYAGAIN santral: the shard map changed during {} (a reload or a move), so its keys would "
     "be counted over two maps; retry it"},
    {ClientError::MoveSwitchTooSlow,
     "TRYAGAIN santral: the move changed direction and not every router has switched within {} "
     "ms (resharding.hold_timeout_ms; one may be frozen or cut off, or a stalled shard has not "
     "yet proven that requests given up on will not run late: SANTRAL RESHARD STATUS says what "
     "the switch waits for); nothing ran, retry it"},
    {ClientError::ShardUnavailable,
     "ERR santral: shard '{}' ({}) is unavailable: {}; Santral keeps retrying in the "
     "background, try again shortly"},
    {ClientError::FailoverWaitOver,
     "ERR santral: shard '{}' ({}) is unavailable: {}; no new primary was put in force within "
     "{} ms (failover.wait_ms), so the command was not sent; try again shortly"},
    {ClientError::ShardTimeout,
     "ERR santral: shard '{}' ({}) did not answer within {} ms ({}); the "
     "command may or may not have run there"},
    {ClientError::ShardConnectionLost,
     "ERR santral: lost the connection to shard '{}' ({}) before it answered ({}); the "
     "command may or may not have run there"},
    {ClientError::ShardProtocolError,
     "ERR santral: shard '{}' ({}) sent a reply that is not valid RESP; its connection was "
     "reset, try again"},
    {ClientError::WriteNotReplicated,
     "NOREPLICAS Not enough good replicas to write: shard '{}' ({}) applied the write, but only "
     "{} of the {} replicas write_concern asks for confirmed it within {} ms; a failover may "
     "lose it: read it back, or send it again if it is safe to repeat"},
    {ClientError::LostWritesRefused,
     "ERR santral: shard '{0}' refuses writes: Sentinel promoted {1} in place of {2}, and {3}, "
     "so writes acknowledged before the failover may be missing from it; reads are still "
     "served. Check or restore its data, then SANTRAL FAILOVER ACCEPT {0} lets writes go "
     "(failover.on_lost_writes: refuse)"},
    {ClientError::ShuttingDown, "ERR santral: the router is shutting down; reconnect shortly"},
};

constexpr auto kTable = [] {
  std::array<std::string_view, std::size(kMessages)> table{};
  for (const Entry& entry : kMessages) table[static_cast<std::size_t>(entry.error)] = entry.format;
  return table;
}();

static_assert(std::size(kMessages) == static_cast<std::size_t>(ClientError::ShuttingDown) + 1,
              "every ClientError needs a message");

}  // namespace

std::string_view error_format(ClientError error) {
  return kTable[static_cast<std::size_t>(error)];
}

}  // namespace santral::protocol
