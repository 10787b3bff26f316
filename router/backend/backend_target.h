#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

namespace santral::router {

// What kind of client a connection serves: the database it has SELECTed and the RESP version
// it speaks (HELLO 3 makes the shard itself produce RESP3, so replies need no conversion).
struct ConnectionProfile {
  int database = 0;
  int protocol = 2;
  bool operator==(const ConnectionProfile&) const = default;
};

struct BackendTarget {
  std::size_t shard_index = 0;
  std::string shard_name;  // for messages: "shard0", or "shard0 replica 127.0.0.1:7101"
  config::Endpoint address;
  ConnectionProfile profile;
};

enum class ConnectionRole {
  Shared,      // pipelined for all of a worker's clients; reconnects by itself
  Dedicated,   // lent to one client at a time (transactions, blocking commands); never
               // reconnects, because a new connection would silently lose MULTI or WATCH state
  Subscriber,  // one client's pub/sub connection: messages are pushed to the client
  Tracking,    // RESP3 with CLIENT TRACKING ON (a near-cache connection, a client-tracking
               // lane); reconnects like a shared one; invalidations go to the push sink, which
               // also hears (connection_lost) whenever the connection, and so the tracking, is lost
  TrackingBroadcast,  // the same with BCAST: pushes for every key written on the shard
};

// Whose the reply to each request in a connection's pipeline is, in the order they were sent.
enum class ReplyOwner : std::uint8_t {
  Client,
  ClientWrite,  // a client's write, its reply held for the WriteConcern (a WAIT) behind it
  WriteConcern,
  Handshake,  // HELLO/AUTH, CLIENT TRACKING, SELECT: an error means the shard refuses Santral
  Silent,
  Probe,     // the health PING
  Naming,    // CLIENT SETNAME: an error changes nothing
  ClientId,  // CLIENT ID: likewise
};

}  // namespace santral::router
