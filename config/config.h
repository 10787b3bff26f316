#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/acl/permissions.h"
#include "config/audit_config.h"
#include "config/cluster_config.h"
#include "config/hashkit/hash_functions.h"
#include "config/namespace/namespace_config.h"
#include "config/near_cache_config.h"
#include "config/read_from.h"
#include "config/salting_config.h"
#include "config/slowlog_config.h"
#include "config/tenant_limits.h"
#include "config/tls_config.h"
#include "config/write_concern.h"
#include "protocol/learned_commands.h"
#include "protocol/request_parser.h"

namespace santral::config {

struct Endpoint {
  std::string host;
  std::uint16_t port = 0;

  std::string text() const;  // "host:port", "[::1]:port" for IPv6
  bool operator==(const Endpoint&) const = default;
};

// Parses "host:port" or "[v6addr]:port"; false when malformed.
bool parse_endpoint(std::string_view text, Endpoint& out);

enum class Distribution { Ketama, Modula, Random };

// As the config spells it, and as logs, INFO, SANTRAL SHARDMAP and the admin pages show it.
constexpr std::string_view distribution_name(Distribution distribution) {
  switch (distribution) {
    case Distribution::Ketama:
      return "ketama";
    case Distribution::Modula:
      return "modula";
    case Distribution::Random:
      return "random";
  }
  return "ketama";
}

struct ShardConfig {
  std::string name;
  Endpoint address;
  std::vector<Endpoint> replicas;  // read-only copies, for read_from
  std::uint32_t weight = 1;
  // What the distribution hashes to place this shard's points: the name. For a twemproxy
  // config without server names this is what twemproxy uses instead ("host:port").
  std::string ring_name;
  // Only while a move empties it (router/resharding/): the map places nothing here, and the
  // shard still serves the keys not yet moved off it.
  bool draining = false;
  bool tls = false;  // spoken to over TLS (backend.tls says how it is checked); replicas too
  // Set: the address and replicas are Sentinel's for this master name (`sentinel:`), asked
  // when the file is read and followed while serving (router/process/sentinel_follow.h).
  std::string sentinel_master;
  int line = 0;  // where the shard is written, for errors found once the sentinels are asked
};

// `sentinel:` the Redis Sentinels that elect the primaries of the shards that name a
// `sentinel_master`.
struct SentinelSettings {
  std::vector<Endpoint> addresses;
  std::string username, password;  // AUTH to the sentinels, when they require it
  int line = 0;
  bool enabled() const { return !addresses.empty(); }
};

// `failover.on_lost_writes`: what becomes of writes to a shard whose new primary (Sentinel's)
// lacks writes its old one had (router/backend/primary_lineage.h). Either way it is reported.
enum class LostWritesPolicy {
  Refuse,  // writes to the shard are refused until SANTRAL FAILOVER ACCEPT <shard>
  Accept,  // they go on
};

// `failover:` what a request for a shard that follows Sentinel does while its primary is down,
// and after a failover that lost writes.
struct FailoverSettings {
  // It waits this long for the primary to answer again or for Sentinel's new one to be put in
  // force (router/backend/backend_connection.h); 0: it fails at once, as for any down shard.
  std::chrono::milliseconds wait{0};
  // Unset: Config::lost_writes_policy() decides.
  std::optional<LostWritesPolicy> on_lost_writes;
  bool operator==(const FailoverSettings&) const = default;
};

// How a reload that moves keys is carried out (router/resharding/).
struct ReshardingSettings {
  bool auto_approve = false;            // start a planned move without SANTRAL RESHARD APPROVE
  std::uint64_t max_keys_per_sec = 0;   // the background mover's bound; 0: none
  std::uint64_t max_bytes_per_sec = 0;  // likewise, by MEMORY USAGE of what it moves
  std::uint32_t batch_keys = 100;       // keys per SCAN page and per MIGRATE
  // At most per MIGRATE, by MEMORY USAGE (a bigger key goes alone); 0: no bound in bytes.
  std::uint64_t batch_bytes = 256 * 1024;
  std::chrono::milliseconds migrate_timeout{10000};  // MIGRATE's own (I/O) timeout
  // How long a request whose keys move waits for every router to switch direction (a pull
  // held): past it, TRYAGAIN instead of a wait without end.
  std::chrono::milliseconds hold_timeout{10000};
  std::filesystem::path state_file;  // where a move survives a restart; empty: beside the file
};

struct Timeouts {
  std::chrono::milliseconds connect{1000};
  std::chrono::milliseconds request{2000};
  // EVAL, EVALSHA and FCALL (and their _RO forms): a script may run long, as on Redis; a shard
  // that has not answered one within this is taken as hung.
  std::chrono::milliseconds script{60000};
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{2000};
};

// How Santral talks to each shard.
struct BackendOptions {
  std::uint32_t connections_per_shard = 1;  // per worker thread
  std::string username;                     // AUTH username password, when set
  std::string password;
  int database = 0;       // SELECTed on every backend connection
  TlsClientSettings tls;  // for the shards with `tls: true`
};

struct ClientLimits {
  std::size_t max_clients = 10000;
  protocol::RequestLimits request;
  // Backpressure: past either cap Santral stops reading from that client until it drains.
  std::size_t max_pending_requests = 4096;
  std::size_t max_output_bytes = 64ull * 1024 * 1024;
  // Client-side caching: keys each worker remembers its clients' reads of (Redis's
  // tracking-table-max-keys); past it, keys are dropped and their readers told to forget them.
  std::size_t tracking_table_max_keys = 1'000'000;
  // A read whose keys live on several shards (SINTER, ZUNION, PFCOUNT, LCS, ...) is merged at
  // the router only while the shards' replies stay within this many bytes.
  std::size_t max_merge_bytes = 64ull * 1024 * 1024;
  // Redis's `timeout`: a client idle this long is closed (not a subscriber or a blocked one);
  // 0: never.
  std::chrono::seconds idle_timeout{0};
  // With a password set, a connection that has not authenticated this soon is closed; 0: never.
  std::chrono::milliseconds auth_timeout{0};
  // Redis's client-query-buffer-limit: one client's input not yet parsed into requests (a
  // bulk it never finishes); past it the client is told and closed.
  std::size_t max_query_buffer_bytes = 1ull << 30;
  // Every client's buffered input together; past it Santral stops reading from the client
  // with the largest buffer until the sum is back under it. 0: no bound.
  std::size_t max_input_bytes_total = 0;
};

// Active and passive health checking of the shards.
struct Health {
  std::chrono::milliseconds interval{1000};  // PING an idle connection this often
  std::uint32_t failures = 3;                // consecutive failures that mark a shard down
};

// The HTTP admin listener (/stats, /metrics, /shards, /config, /hotkeys).
struct Admin {
  Endpoint listen{"127.0.0.1", 0};  // port 0: disabled
  std::string token;                // when set, requests need "Authorization: Bearer <token>"
  bool tls = false;                 // HTTPS, with the certificate of `tls:`
  // Without a token the admin API is refused on an address other than loopback, unless this.
  bool allow_remote_without_token = false;
};

// `shutdown:` how a SIGTERM ends the process (drain_ms bounds the drain itself).
struct ShutdownSettings {
  // /readyz answers 503 this long before the listeners close, so that a load balancer stops
  // sending new clients first; 0: the drain starts at once.
  std::chrono::milliseconds ready_delay{0};
};

// A user clients may AUTH as (AUTH name password), with its ACL rules (config/acl/): its
// passwords (as SHA-256) and what it may run; without `rules:` it may run everything.
struct User {
  std::string name;
  std::shared_ptr<const Permissions> permissions;  // never null
  TenantLimits limits;                             // none by default
};

// Why the admin API must not listen where `admin` says (beyond loopback without a token, unless
// allowed); nullopt when it may.
std::optional<std::string> admin_exposure_error(const Admin& admin);

enum class ConfigFormat { Auto, Santral, Twemproxy };

// A validated configuration; everything the router needs, nothing left to check.
struct Config {
  std::filesystem::path source;
  ConfigFormat format = ConfigFormat::Santral;
  Endpoint listen{"127.0.0.1", 6380};
  bool plain_listener = true;          // false: `listen:` left out beside tls.listen (TLS only)
  TlsServerSettings tls;               // the clients' TLS listener, and the admin API's certificate
  unsigned workers = 0;                // resolved: never 0 after loading
  std::string hash_name = "fnv1a_64";  // twemproxy's default; Santral's own format uses murmur
  hashkit::HashFunction hash = nullptr;
  Distribution distribution = Distribution::Ketama;
  std::string hash_tag;  // two characters ("{}"), or empty for none
  std::vector<ShardConfig> shards;
  // Key namespaces with their own shard key and strategy, in order: the first whose pattern
  // matches a key places it. Keys of no namespace use the placement above.
  std::vector<NamespaceConfig> namespaces;
  Timeouts timeouts;
  BackendOptions backend;
  ClientLimits limits;
  std::string password;     // clients must AUTH with it when set (twemproxy's redis_auth)
  std::vector<User> users;  // more users, ACL style; with any, clients must AUTH
  int databases = 16;       // SELECT accepts 0 .. databases-1, as Redis's `databases`
  ReadFrom read_from = ReadFrom::Primary;
  // read_from.max_lag_ms: a replica further behind its primary gets no reads; 0: no bound
  // (a replica still syncing never gets any).
  std::chrono::milliseconds replica_max_lag{0};
  WriteConcern write_concern;
  SentinelSettings sentinel;
  FailoverSettings failover;
  Health health;
  Admin admin;
  HotKeySettings hotkeys;
  // Hot counters spread over salted sub-keys (router/hotkeys/); SANTRAL SALT adds more at run
  // time.
  std::vector<SaltRule> salting;
  NearCacheSettings near_cache;           // hot reads answered by each worker (router/hotkeys/)
  ReshardingSettings resharding;          // how a placement change moves its keys
  bool watch_file = true;                 // reload when the file changes on disk
  std::chrono::milliseconds drain{5000};  // on SIGTERM, wait this long for in-flight work
  ShutdownSettings shutdown;
  AuditSettings audit;      // the operators' actions, as JSON lines; off by default
  SlowLogSettings slowlog;  // which slow requests SLOWLOG keeps
  std::string log_level = "info";
  // `cross_shard_writes: allow`: SINTERSTORE, SMOVE, RENAME, ... with keys on several shards
  // run as a read, a write and a delete, not atomically; by default they are CROSSSLOT.
  bool cross_shard_writes = false;
  ClusterSettings cluster;  // a fleet sharing its shard map through etcd; off when empty
  // `cluster_endpoint: true`: Santral answers Redis Cluster clients (CLUSTER SLOTS, SHARDS,
  // NODES, ...) with the fleet's routers as the nodes (router/commands/cluster_commands.h).
  bool cluster_endpoint = false;
  // `announce:` where clients reach this router, as the cluster endpoint reports it (and its
  // fleet registration carries it); unset: the listen address.
  std::optional<Endpoint> announce;
  // `commands:` module or custom commands declared with their keys and flags
  // (config/command_declarations.h); shared by a fleet like the map.
  std::vector<protocol::CommandShape> commands;
  // Settings accepted but not acted on, to be logged at start-up (e.g. twemproxy's
  // auto_eject_hosts, which Santral replaces with clear errors for a down shard's keys).
  std::vector<std::string> warnings;

  // Whether some write is to be confirmed by replicas: write_concern, or a namespace's.
  bool confirms_writes() const;
  // failover.on_lost_writes, or its default: refuse where writes are confirmed by replicas
  // (confirms_writes()), accept otherwise.
  LostWritesPolicy lost_writes_policy() const;
};

// Validates `text`, a config read from `source` (named in error messages). Throws ConfigError.
Config parse_config(const std::string& text, const std::filesystem::path& source,
                    ConfigFormat format = ConfigFormat::Auto, const std::string& pool = "");

// Reads and validates `path`. Throws ConfigError (config/config_error.h) naming the file,
// line and key of the first problem. `pool` picks one pool of a twemproxy file that has
// several.
Config load_config(const std::filesystem::path& path, ConfigFormat format = ConfigFormat::Auto,
                   const std::string& pool = "");

}  // namespace santral::config
