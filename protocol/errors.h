#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace santral::protocol {

// Every error a client can see, in one table (errors.cpp). Each message says what happened
// and what to do about it; where Redis has a message for the same situation, Santral uses
// Redis's words so clients that match on them keep working.
enum class ClientError : std::uint8_t {
  // The request stream (the connection is closed after these).
  InvalidMultibulkLength,
  TooManyArguments,
  InvalidBulkLength,
  BulkTooLarge,
  ExpectedDollar,
  TooBigCountString,
  TooBigBulkCountString,
  TooBigInline,
  UnbalancedQuotes,
  // The command.
  UnknownCommand,
  UnknownSubcommand,
  WrongArity,
  NoKeysFound,
  CrossShard,
  Refused,
  NotYetSupported,
  ClusterSupportDisabled,
  ClusterInvalidSlot,
  ClusterInvalidCount,
  SyntaxError,
  NotAnInteger,
  // Connection state.
  SelectInvalid,
  NoProto,
  ProtocolVersionNotInteger,
  HelloOptionSyntax,
  HelloNoAuth,
  SubscribedMode,
  MonitorKeyspace,
  ClientNotFound,
  InvalidClientName,
  InvalidClientId,
  KillClientId,
  UnknownClientType,
  KillNoSuchUser,
  UnblockReason,
  Unblocked,
  // Client-side caching (CLIENT TRACKING, CLIENT CACHING).
  TrackingRedirectMissing,
  TrackingRedirectTwice,
  TrackingPrefixNeedsBcast,
  TrackingSwitchBcast,
  TrackingBcastOptions,
  TrackingOptInAndOptOut,
  TrackingSwitchOptMode,
  TrackingPrefixOverlapsExisting,
  TrackingPrefixOverlapsGiven,
  CachingNotInMode,
  CachingYesNotOptIn,
  CachingNoNotOptOut,
  // Transactions and scans.
  MultiNested,
  ExecWithoutMulti,
  DiscardWithoutMulti,
  WatchInMulti,
  ExecAbort,
  ExecRefused,
  TransactionCrossShard,
  NotInTransaction,
  NotAllowedInMulti,
  PinnedConnection,
  InvalidCursor,
  AuthNotConfigured,
  AuthFailed,
  NoAuth,
  MaxClients,
  // Slow and idle clients (limits.*).
  QueryBufferLimit,
  AuthTimeout,
  // ACL rules (router/acl/) and the ACL commands.
  NoPermCommand,
  NoPermKey,
  NoPermChannel,
  AclUnknownCategory,
  AclUserNotFound,
  AclCommandNotFound,
  AclLogCount,
  DryrunCommand,
  DryrunKey,
  DryrunChannel,
  // Merging the replies of several shards.
  MergeUnexpectedReply,
  MergeNoReply,
  MergeNoShard,
  MergeNoRule,
  MergeInconsistentPlan,
  MergeFailedOnShards,
  MergeBusyOnShards,
  MergeBusyOnSomeShards,
  MergeAnsweredDifferently,
  MergeSumOverflow,
  MergeTooLarge,
  // Redis's own words for what a merged cross-shard read finds (router/merge/gathered/).
  WrongType,
  WeightNotFloat,
  LimitNegative,
  HllInvalid,
  HllCorrupted,
  LcsNotStrings,
  LcsLenAndIdx,
  LcsTooLarge,
  NoSuchKey,
  CrossShardCopyDb,
  ScanCursorTooLarge,
  WaitUnexpectedReply,
  // Hot keys and salted counters (router/hotkeys/).
  SaltedCommand,
  SaltedInTransaction,
  SaltedNotNumber,
  SaltedOverflow,
  SaltCount,
  SaltSyntax,
  NotSalted,
  AlreadySalted,
  SaltStateFile,
  UnsaltFold,
  HotKeysSyntax,
  // Santral's own commands.
  ReloadRejected,
  ReshardSyntax,
  ReshardNothingPlanned,
  ReshardNotMoving,
  ReshardBusy,
  ReshardStateFile,
  BalanceSyntax,
  BalanceWhileMoving,
  AnalyzeSyntax,
  AnalyzeBusy,
  AnalyzeTarget,
  FailoverSyntax,
  FailoverNothingToAccept,
  // A fleet of routers sharing one map (router/cluster/).
  NotInFleet,
  MapPushSyntax,
  // A user's limits (router/runtime/tenant_limiter.h).
  UserRateLimited,
  UserConnectionLimit,
  UserPipelineLimit,
  NamespaceRateLimited,
  // SLOWLOG (router/commands/slowlog_commands.h).
  SlowlogCount,
  ShardSlowlogSyntax,
  // Across the fleet (router/commands/across_fleet.h): CLIENT KILL, SLOWLOG LEN/RESET.
  RoutersSilent,
  ClientsLocalSyntax,
  SlowlogLocalSyntax,
  MapProposal,
  FleetOutOfTouch,
  FleetMapRefused,
  FleetUnsaltUnconfirmed,
  // Health probes (router/admin/health_probes.h): the reason GET /livez or GET /readyz gives
  // beside its status, in an HTTP answer rather than a RESP reply.
  ProbeWorkerSilent,
  ProbeStarting,
  ProbeShardDown,
  ProbeNotJoined,
  ProbeOutOfTouch,
  ProbeMapRefused,
  ProbeMapBehind,
  ProbeDraining,
  // A move in progress.
  MoveFailed,
  MoveChangedUnderneath,
  SlotScanMapChanged,
  MoveSwitchTooSlow,
  // Shards.
  ShardUnavailable,
  FailoverWaitOver,
  ShardTimeout,
  ShardConnectionLost,
  ShardProtocolError,
  WriteNotReplicated,
  LostWritesRefused,
  ShuttingDown,
};

// The fmt format string of `error`, without the leading '-' and trailing CRLF.
std::string_view error_format(ClientError error);

template <typename... Args>
std::string error_message(ClientError error, Args&&... args) {
  return fmt::format(fmt::runtime(error_format(error)), std::forward<Args>(args)...);
}

// Text from elsewhere (a shard's error, a config error) that goes inside a one-line reply:
// line breaks (possible in a RESP3 blob error) become spaces.
inline std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line)
    if (c == '\r' || c == '\n') c = ' ';
  return line;
}

}  // namespace santral::protocol
