// Pub/sub through Santral: a channel lives on the shard that owns its name, a pattern listens on
// every shard, and a subscriber sees one Redis: its own confirmations with counts over all
// shards, and every message exactly once, in the order its shard sent it.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

// A reply as one line, e.g. ["subscribe","news1",1], so that a whole frame is compared at once
// and a failure shows what came back.
std::string show(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::String:
    case Reply::Type::Status:
      return "\"" + reply.str + "\"";
    case Reply::Type::Error:
      return "(error) " + reply.str;
    case Reply::Type::Integer:
      return std::to_string(reply.integer);
    case Reply::Type::Nil:
      return "nil";
    case Reply::Type::Array: {
      std::string out = "[";
      for (std::size_t i = 0; i < reply.elements.size(); ++i) {
        if (i > 0) out += ",";
        out += show(reply.elements[i]);
      }
      return out + "]";
    }
  }
  return "?";
}

std::string frame(const std::vector<std::string>& strings, std::optional<long long> count = {}) {
  std::string out = "[";
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (i > 0) out += ",";
    out += "\"" + strings[i] + "\"";
  }
  if (count) out += "," + std::to_string(*count);
  return out + "]";
}

// RESP2 command bytes, for RawConnection.
std::string resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// A RESP3 push frame of bulk strings, optionally ending with an integer.
std::string push(const std::vector<std::string>& strings, std::optional<long long> count = {}) {
  std::string out = ">" + std::to_string(strings.size() + (count ? 1 : 0)) + "\r\n";
  for (const auto& s : strings) out += "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  if (count) out += ":" + std::to_string(*count) + "\r\n";
  return out;
}

long long numsub(RedisServer& shard, const std::string& channel) {
  return shard.client().command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer;
}

long long shardnumsub(RedisServer& shard, const std::string& channel) {
  return shard.client().command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer;
}

long long numpat(RedisServer& shard) {
  return shard.client().command({"PUBSUB", "NUMPAT"}).integer;
}

// Connections on `shard` that are in pub/sub mode, as the shard lists them.
std::vector<std::string> pubsub_connections(RedisServer& shard) {
  std::string text = shard.client().command({"CLIENT", "LIST", "TYPE", "pubsub"}).str;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("PUBLISH and SPUBLISH run on the shard that owns the channel") {
  Cluster cluster(4);
  auto client = cluster.client();
  std::vector<std::string> channels;
  for (std::size_t s = 0; s < 4; ++s) channels.push_back(cluster.key_on(s, "news"));
  // Shard s gets s + 1 PUBLISHes and 2 * (s + 1) SPUBLISHes.
  for (std::size_t s = 0; s < 4; ++s) {
    for (std::size_t n = 0; n <= s; ++n) {
      auto published = client.command({"PUBLISH", channels[s], "hello"});
      REQUIRE(show(published) == "0");  // nobody listens yet
    }
    for (std::size_t n = 0; n < 2 * (s + 1); ++n)
      REQUIRE(show(client.command({"SPUBLISH", channels[s], "hello"})) == "0");
  }
  for (std::size_t s = 0; s < 4; ++s) {
    INFO("shard " << s);
    CHECK(cluster.shard(s).command_calls("publish") == static_cast<long long>(s + 1));
    CHECK(cluster.shard(s).command_calls("spublish") == static_cast<long long>(2 * (s + 1)));
  }
}

TEST_CASE(
    "SUBSCRIBE across shards: ordered confirmations with running counts, messages from every "
    "shard") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  auto publisher = cluster.client();
  std::string on0 = cluster.key_on(0, "chan-a");
  std::string on0b = cluster.key_on(0, "chan-b");
  std::string on1 = cluster.key_on(1, "chan-c");
  std::string on2 = cluster.key_on(2, "chan-d");

  CHECK(show(subscriber.command({"SUBSCRIBE", on1, on0, on2, on0b})) ==
        frame({"subscribe", on1}, 1));
  CHECK(show(subscriber.get_reply()) == frame({"subscribe", on0}, 2));
  CHECK(show(subscriber.get_reply()) == frame({"subscribe", on2}, 3));
  CHECK(show(subscriber.get_reply()) == frame({"subscribe", on0b}, 4));

  // Each shard holds this client's channels on one connection of its own; shard 3 has none.
  CHECK(numsub(cluster.shard(0), on0) == 1);
  CHECK(numsub(cluster.shard(0), on0b) == 1);
  CHECK(numsub(cluster.shard(1), on1) == 1);
  CHECK(numsub(cluster.shard(2), on2) == 1);
  auto on_shard0 = pubsub_connections(cluster.shard(0));
  REQUIRE(on_shard0.size() == 1);
  CHECK(on_shard0[0].find(" sub=2 ") != std::string::npos);
  CHECK(pubsub_connections(cluster.shard(1)).size() == 1);
  CHECK(pubsub_connections(cluster.shard(2)).size() == 1);
  CHECK(pubsub_connections(cluster.shard(3)).empty());
  // A channel is registered only where it lives.
  CHECK(numsub(cluster.shard(1), on0) == 0);
  CHECK(numsub(cluster.shard(3), on2) == 0);

  std::multiset<std::string> sent;
  for (const auto& channel : {on0, on1, on2, on0b}) {
    CHECK(show(publisher.command({"PUBLISH", channel, "to " + channel})) == "1");
    sent.insert(frame({"message", channel, "to " + channel}));
  }
  // Shards deliver independently, so only the set of messages is fixed.
  std::multiset<std::string> received;
  for (std::size_t i = 0; i < sent.size(); ++i) received.insert(show(subscriber.get_reply()));
  CHECK(received == sent);
}

TEST_CASE("SUBSCRIBE is confirmed only once every shard involved has confirmed") {
  Cluster cluster(4);
  std::string fast = cluster.key_on(0, "fast");
  std::string slow = cluster.key_on(1, "slow");
  RawConnection subscriber(cluster.santral().port());
  auto publisher = cluster.client();

  cluster.shard(1).pause();
  subscriber.send(resp({"SUBSCRIBE", fast, slow}));
  REQUIRE(wait_until([&] { return numsub(cluster.shard(0), fast) == 1; }, 5000));
  // Shard 0 has the subscription, so this message reaches Santral now; it must wait behind the
  // confirmations, which wait for shard 1.
  REQUIRE(show(publisher.command({"PUBLISH", fast, "early"})) == "1");
  // An observation window, not synchronisation: nothing may arrive while shard 1 is silent.
  CHECK(subscriber.read_some(1, 300).empty());
  cluster.shard(1).resume();

  std::string expected = "*3\r\n$9\r\nsubscribe\r\n$" + std::to_string(fast.size()) + "\r\n" +
                         fast + "\r\n:1\r\n" + "*3\r\n$9\r\nsubscribe\r\n$" +
                         std::to_string(slow.size()) + "\r\n" + slow + "\r\n:2\r\n" +
                         "*3\r\n$7\r\nmessage\r\n$" + std::to_string(fast.size()) + "\r\n" + fast +
                         "\r\n$5\r\nearly\r\n";
  CHECK(subscriber.read_some(expected.size()) == expected);
}

TEST_CASE("1,000 messages per channel arrive in order, from channels on two shards") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  auto publisher = cluster.client();
  std::string first = cluster.key_on(0, "ordered");
  std::string second = cluster.key_on(3, "ordered");
  REQUIRE(show(subscriber.command({"SUBSCRIBE", first, second})) == frame({"subscribe", first}, 1));
  REQUIRE(show(subscriber.get_reply()) == frame({"subscribe", second}, 2));

  constexpr int kMessages = 1000;
  for (int i = 0; i < kMessages; ++i) {
    publisher.append({"PUBLISH", first, std::to_string(i)});
    publisher.append({"PUBLISH", second, std::to_string(i)});
  }
  for (int i = 0; i < 2 * kMessages; ++i) REQUIRE(publisher.get_reply().integer == 1);

  std::map<std::string, int> next{{first, 0}, {second, 0}};
  for (int i = 0; i < 2 * kMessages; ++i) {
    auto message = subscriber.get_reply();
    REQUIRE(message.type == Reply::Type::Array);
    REQUIRE(message.elements.size() == 3);
    REQUIRE(message.elements[0].str == "message");
    const std::string& channel = message.elements[1].str;
    REQUIRE(next.count(channel) == 1);
    INFO("channel " << channel);
    REQUIRE(message.elements[2].str == std::to_string(next[channel]));
    ++next[channel];
  }
  CHECK(next[first] == kMessages);
  CHECK(next[second] == kMessages);
}

TEST_CASE("PSUBSCRIBE listens on every shard; each matching message arrives exactly once") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  auto publisher = cluster.client();
  CHECK(show(subscriber.command({"PSUBSCRIBE", "news.*"})) == frame({"psubscribe", "news.*"}, 1));
  for (std::size_t s = 0; s < 4; ++s) CHECK(numpat(cluster.shard(s)) == 1);

  std::vector<std::string> channels;
  for (std::size_t s = 0; s < 4; ++s) channels.push_back(cluster.key_on(s, "news."));
  std::multiset<std::string> sent;
  for (const auto& channel : channels) {
    CHECK(show(publisher.command({"PUBLISH", channel, "story"})) == "1");
    sent.insert(frame({"pmessage", "news.*", channel, "story"}));
  }
  CHECK(show(publisher.command({"PUBLISH", "sports.1", "ignored"})) == "0");
  // A closing message per shard: each shard's messages come in order, so once every "end" is in,
  // a duplicate of an earlier message would have been seen.
  for (const auto& channel : channels) {
    CHECK(show(publisher.command({"PUBLISH", channel, "end"})) == "1");
    sent.insert(frame({"pmessage", "news.*", channel, "end"}));
  }
  std::multiset<std::string> received;
  for (std::size_t i = 0; i < sent.size(); ++i) received.insert(show(subscriber.get_reply()));
  CHECK(received == sent);

  CHECK(show(subscriber.command({"PUNSUBSCRIBE", "news.*"})) ==
        frame({"punsubscribe", "news.*"}, 0));
  for (std::size_t s = 0; s < 4; ++s) CHECK(numpat(cluster.shard(s)) == 0);
  CHECK(show(publisher.command({"PUBLISH", channels[2], "late"})) == "0");
  CHECK(show(subscriber.command({"PUNSUBSCRIBE"})) == R"(["punsubscribe",nil,0])");
}

TEST_CASE("UNSUBSCRIBE: remaining counts, no more messages, and the reply when nothing is left") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  auto publisher = cluster.client();
  std::string kept = cluster.key_on(0, "kept");
  std::string dropped = cluster.key_on(0, "dropped");  // same shard: one ordered stream
  std::string other = cluster.key_on(1, "other");
  REQUIRE(show(subscriber.command({"SUBSCRIBE", kept, dropped, other})) ==
          frame({"subscribe", kept}, 1));
  REQUIRE(show(subscriber.get_reply()) == frame({"subscribe", dropped}, 2));
  REQUIRE(show(subscriber.get_reply()) == frame({"subscribe", other}, 3));

  CHECK(show(subscriber.command({"UNSUBSCRIBE", dropped})) == frame({"unsubscribe", dropped}, 2));
  CHECK(numsub(cluster.shard(0), dropped) == 0);
  CHECK(numsub(cluster.shard(0), kept) == 1);
  CHECK(show(publisher.command({"PUBLISH", dropped, "unwanted"})) == "0");
  CHECK(show(publisher.command({"PUBLISH", kept, "wanted"})) == "1");
  // Both went through the same shard connection in this order: "unwanted" would come first.
  CHECK(show(subscriber.get_reply()) == frame({"message", kept, "wanted"}));

  // Without arguments: every remaining channel, in any order, counting down to 0.
  std::set<std::string> left;
  auto first = subscriber.command({"UNSUBSCRIBE"});
  REQUIRE(first.elements.size() == 3);
  auto second = subscriber.get_reply();
  REQUIRE(second.elements.size() == 3);
  CHECK(first.elements[0].str == "unsubscribe");
  CHECK(second.elements[0].str == "unsubscribe");
  left.insert(first.elements[1].str);
  left.insert(second.elements[1].str);
  CHECK(left == std::set<std::string>{kept, other});
  CHECK(first.elements[2].integer == 1);
  CHECK(second.elements[2].integer == 0);
  CHECK(numsub(cluster.shard(0), kept) == 0);
  CHECK(numsub(cluster.shard(1), other) == 0);

  CHECK(show(subscriber.command({"UNSUBSCRIBE"})) == R"(["unsubscribe",nil,0])");
  // Out of pub/sub mode: ordinary commands work again.
  CHECK(subscriber.command({"SET", "after", "1"}).is_ok());
  CHECK(show(subscriber.command({"GET", "after"})) == "\"1\"");
}

TEST_CASE("SSUBSCRIBE, SPUBLISH and SUNSUBSCRIBE use shard channels on the owning shard") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  auto publisher = cluster.client();
  std::string on1 = cluster.key_on(1, "orders");
  std::string on2 = cluster.key_on(2, "orders");
  CHECK(show(subscriber.command({"SSUBSCRIBE", on1, on2})) == frame({"ssubscribe", on1}, 1));
  CHECK(show(subscriber.get_reply()) == frame({"ssubscribe", on2}, 2));
  CHECK(shardnumsub(cluster.shard(1), on1) == 1);
  CHECK(shardnumsub(cluster.shard(2), on2) == 1);
  CHECK(shardnumsub(cluster.shard(0), on1) == 0);

  CHECK(show(publisher.command({"SPUBLISH", on1, "first"})) == "1");
  CHECK(show(subscriber.get_reply()) == frame({"smessage", on1, "first"}));
  CHECK(show(publisher.command({"SPUBLISH", on2, "second"})) == "1");
  CHECK(show(subscriber.get_reply()) == frame({"smessage", on2, "second"}));
  // A plain PUBLISH on the same name is another channel.
  CHECK(show(publisher.command({"PUBLISH", on1, "plain"})) == "0");

  CHECK(show(subscriber.command({"SUNSUBSCRIBE", on1})) == frame({"sunsubscribe", on1}, 1));
  CHECK(shardnumsub(cluster.shard(1), on1) == 0);
  CHECK(show(publisher.command({"SPUBLISH", on1, "gone"})) == "0");
  CHECK(show(subscriber.command({"SUNSUBSCRIBE"})) == frame({"sunsubscribe", on2}, 0));
  CHECK(show(subscriber.command({"SUNSUBSCRIBE"})) == R"(["sunsubscribe",nil,0])");
  CHECK(subscriber.command({"SET", "after", "1"}).is_ok());
}

TEST_CASE("UNSUBSCRIBE without channels counts only channels and patterns, as Redis does") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  std::string sharded = cluster.key_on(1, "orders");
  REQUIRE(show(subscriber.command({"SSUBSCRIBE", sharded})) == frame({"ssubscribe", sharded}, 1));
  // Redis 7.0: *3 $11 unsubscribe $-1 :0 (clientSubscriptionsCount: channels + patterns; shard
  // channels have their own count).
  CHECK(show(subscriber.command({"UNSUBSCRIBE"})) == R"(["unsubscribe",nil,0])");
  CHECK(show(subscriber.command({"PUNSUBSCRIBE"})) == R"(["punsubscribe",nil,0])");
}

TEST_CASE("a subscribed RESP2 client may only (un)subscribe, PING, QUIT and RESET") {
  Cluster cluster(4);
  auto subscriber = cluster.client();
  std::string channel = cluster.key_on(0, "room");
  REQUIRE(show(subscriber.command({"SUBSCRIBE", channel})) == frame({"subscribe", channel}, 1));

  auto refused = subscriber.command({"GET", "k"});
  CHECK(refused.is_error());
  CHECK(refused.str ==
        "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        "are allowed in this context");
  auto set = subscriber.command({"SET", "k", "v"});
  CHECK(set.str ==
        "ERR Can't execute 'set': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        "are allowed in this context");
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(cluster.shard(s).command_calls("get") == 0);
    CHECK(cluster.shard(s).command_calls("set") == 0);
  }
  CHECK(show(subscriber.command({"PING"})) == R"(["pong",""])");
  CHECK(show(subscriber.command({"PING", "hi"})) == R"(["pong","hi"])");
  // Subscribing more is allowed, and so is QUIT.
  std::string more = cluster.key_on(1, "room");
  CHECK(show(subscriber.command({"SUBSCRIBE", more})) == frame({"subscribe", more}, 2));
  CHECK(subscriber.command({"QUIT"}).is_ok());
}

TEST_CASE("PUBSUB CHANNELS, NUMSUB and NUMPAT answer for all shards together") {
  Cluster cluster(4, "workers: 2\n");
  auto one = cluster.client();
  auto two = cluster.client();
  auto asker = cluster.client();
  std::string a = cluster.key_on(0, "topic");
  std::string b = cluster.key_on(1, "topic");
  std::string c = cluster.key_on(2, "topic");
  REQUIRE(show(one.command({"SUBSCRIBE", a, b})) == frame({"subscribe", a}, 1));
  REQUIRE(show(one.get_reply()) == frame({"subscribe", b}, 2));
  REQUIRE(show(one.command({"PSUBSCRIBE", "p1.*", "p2.*"})) == frame({"psubscribe", "p1.*"}, 3));
  REQUIRE(show(one.get_reply()) == frame({"psubscribe", "p2.*"}, 4));
  REQUIRE(show(two.command({"SUBSCRIBE", a, c})) == frame({"subscribe", a}, 1));
  REQUIRE(show(two.get_reply()) == frame({"subscribe", c}, 2));
  REQUIRE(show(two.command({"PSUBSCRIBE", "p1.*"})) == frame({"psubscribe", "p1.*"}, 3));

  auto channels = asker.command({"PUBSUB", "CHANNELS"});
  REQUIRE(channels.type == Reply::Type::Array);
  std::multiset<std::string> names;
  for (const auto& e : channels.elements) names.insert(e.str);
  CHECK(names == std::multiset<std::string>{a, b, c});
  auto matching = asker.command({"PUBSUB", "CHANNELS", b});
  CHECK(show(matching) == frame({b}));

  CHECK(show(asker.command({"PUBSUB", "NUMSUB", a, b, c, "nobody"})) ==
        "[\"" + a + "\",2,\"" + b + "\",1,\"" + c + "\",1,\"nobody\",0]");
  CHECK(show(asker.command({"PUBSUB", "NUMPAT"})) == "2");
  CHECK(show(asker.command({"PUBLISH", a, "both"})) == "2");
  CHECK(show(one.get_reply()) == frame({"message", a, "both"}));
  CHECK(show(two.get_reply()) == frame({"message", a, "both"}));
}

TEST_CASE("RESP3: confirmations and messages are push frames, and other commands still work") {
  Cluster cluster(4);
  RawConnection subscriber(cluster.santral().port());
  auto publisher = cluster.client();
  std::string on0 = cluster.key_on(0, "feed");
  std::string on3 = cluster.key_on(3, "feed");
  std::string key = cluster.key_on(2, "value");
  REQUIRE(publisher.command({"SET", key, "v"}).is_ok());

  subscriber.send(resp({"HELLO", "3"}));
  std::string hello = subscriber.read_some(1);
  REQUIRE(hello.rfind("%7\r\n", 0) == 0);
  // The rest of the HELLO map may still be on its way; take it up to its last element.
  std::string tail = "$7\r\nmodules\r\n*0\r\n";
  while (hello.find(tail) == std::string::npos) {
    std::string more = subscriber.read_some(1, 2000);
    REQUIRE(!more.empty());
    hello += more;
  }

  std::string confirmations = push({"subscribe", on0}, 1) + push({"subscribe", on3}, 2);
  subscriber.send(resp({"SUBSCRIBE", on0, on3}));
  CHECK(subscriber.read_some(confirmations.size()) == confirmations);

  // Still subscribed, and ordinary commands get ordinary RESP3 replies.
  std::string replies = "$1\r\nv\r\n_\r\n+PONG\r\n";
  subscriber.send(resp({"GET", key}) + resp({"GET", "missing"}) + resp({"PING"}));
  CHECK(subscriber.read_some(replies.size()) == replies);

  CHECK(show(publisher.command({"PUBLISH", on3, "hi"})) == "1");
  std::string message = push({"message", on3, "hi"});
  CHECK(subscriber.read_some(message.size()) == message);

  std::string pconfirm = push({"psubscribe", "feed*"}, 3);
  subscriber.send(resp({"PSUBSCRIBE", "feed*"}));
  CHECK(subscriber.read_some(pconfirm.size()) == pconfirm);
  CHECK(show(publisher.command({"PUBLISH", on0, "both"})) == "2");
  std::string both = push({"message", on0, "both"}) + push({"pmessage", "feed*", on0, "both"});
  CHECK(subscriber.read_some(both.size()) == both);

  std::string unsubscribed = push({"unsubscribe", on0}, 2);
  subscriber.send(resp({"UNSUBSCRIBE", on0}));
  CHECK(subscriber.read_some(unsubscribed.size()) == unsubscribed);
}

TEST_CASE("a RESP3 subscriber that goes back to HELLO 2 gets RESP2 messages") {
  Cluster cluster(2);
  RawConnection subscriber(cluster.santral().port());
  auto publisher = cluster.client();
  std::string channel = cluster.key_on(1, "feed");

  subscriber.send(resp({"HELLO", "3"}) + resp({"SUBSCRIBE", channel}));
  std::string confirmation = push({"subscribe", channel}, 1);
  std::string received;
  while (received.find(confirmation) == std::string::npos) {
    std::string more = subscriber.read_some(1, 2000);
    REQUIRE(!more.empty());
    received += more;
  }
  REQUIRE(received.size() == received.find(confirmation) + confirmation.size());

  // HELLO 2 is allowed here (the client is in RESP3); from now on Redis writes RESP2 arrays.
  subscriber.send(resp({"HELLO", "2"}));
  std::string hello = subscriber.read_some(1);
  REQUIRE(hello.rfind("*14\r\n", 0) == 0);
  std::string tail = "$7\r\nmodules\r\n*0\r\n";
  while (hello.find(tail) == std::string::npos) {
    std::string more = subscriber.read_some(1, 2000);
    REQUIRE(!more.empty());
    hello += more;
  }

  CHECK(show(publisher.command({"PUBLISH", channel, "m"})) == "1");
  std::string expected = "*3\r\n$7\r\nmessage\r\n$" + std::to_string(channel.size()) + "\r\n" +
                         channel + "\r\n$1\r\nm\r\n";
  CHECK(subscriber.read_some(expected.size()) == expected);
}

TEST_CASE("a subscriber that disconnects leaves no subscription behind on any shard") {
  Cluster cluster(4);
  std::string on0 = cluster.key_on(0, "gone");
  std::string on1 = cluster.key_on(1, "gone");
  std::string sharded = cluster.key_on(2, "gone");
  {
    auto subscriber = cluster.client();
    REQUIRE(show(subscriber.command({"SUBSCRIBE", on0, on1})) == frame({"subscribe", on0}, 1));
    REQUIRE(show(subscriber.get_reply()) == frame({"subscribe", on1}, 2));
    REQUIRE(show(subscriber.command({"PSUBSCRIBE", "gone*"})) == frame({"psubscribe", "gone*"}, 3));
    REQUIRE(show(subscriber.command({"SSUBSCRIBE", sharded})) == frame({"ssubscribe", sharded}, 1));
    REQUIRE(numsub(cluster.shard(0), on0) == 1);
    REQUIRE(numsub(cluster.shard(1), on1) == 1);
    REQUIRE(shardnumsub(cluster.shard(2), sharded) == 1);
    for (std::size_t s = 0; s < 4; ++s) REQUIRE(pubsub_connections(cluster.shard(s)).size() == 1);
  }  // the client closes its connection
  CHECK(wait_until(
      [&] {
        for (std::size_t s = 0; s < 4; ++s)
          if (!pubsub_connections(cluster.shard(s)).empty()) return false;
        return true;
      },
      5000));
  CHECK(numsub(cluster.shard(0), on0) == 0);
  CHECK(numsub(cluster.shard(1), on1) == 0);
  CHECK(shardnumsub(cluster.shard(2), sharded) == 0);
  for (std::size_t s = 0; s < 4; ++s) CHECK(numpat(cluster.shard(s)) == 0);
  // Santral itself still serves.
  auto client = cluster.client();
  CHECK(show(client.command({"PUBLISH", on0, "nobody"})) == "0");
}

TEST_CASE("keyspace notifications: every shard's events reach PSUBSCRIBE and SUBSCRIBE") {
  Cluster cluster(3);
  auto client = cluster.client();
  // CONFIG SET is broadcast: every shard notifies.
  REQUIRE(client.command({"CONFIG", "SET", "notify-keyspace-events", "KEA"}).is_ok());
  for (std::size_t s = 0; s < 3; ++s)
    CHECK(cluster.shard(s)
              .client()
              .command({"CONFIG", "GET", "notify-keyspace-events"})
              .elements.at(1)
              .str.find('K') != std::string::npos);
  std::vector<std::string> keys;
  for (std::size_t s = 0; s < 3; ++s) keys.push_back(cluster.key_on(s, "note:"));

  SECTION("PSUBSCRIBE __keyspace@0__:* and __keyevent@0__:* see every shard's writes") {
    auto subscriber = cluster.client();
    CHECK(show(subscriber.command({"PSUBSCRIBE", "__keyspace@0__:*", "__keyevent@0__:*"})) ==
          frame({"psubscribe", "__keyspace@0__:*"}, 1));
    CHECK(show(subscriber.get_reply()) == frame({"psubscribe", "__keyevent@0__:*"}, 2));
    std::multiset<std::string> expected;
    for (const auto& key : keys) {
      REQUIRE(client.command({"SET", key, "v"}).is_ok());
      expected.insert(frame({"pmessage", "__keyspace@0__:*", "__keyspace@0__:" + key, "set"}));
      expected.insert(frame({"pmessage", "__keyevent@0__:*", "__keyevent@0__:set", key}));
    }
    std::multiset<std::string> received;
    for (std::size_t i = 0; i < expected.size(); ++i) received.insert(show(subscriber.get_reply()));
    CHECK(received == expected);
  }

  SECTION("SUBSCRIBE to a key's channel listens on the key's shard; expired from every shard") {
    auto subscriber = cluster.client();
    // The key's channel name hashes elsewhere than the key: it must still be heard.
    std::string key = keys[2];
    CHECK(show(subscriber.command({"SUBSCRIBE", "__keyspace@0__:" + key})) ==
          frame({"subscribe", "__keyspace@0__:" + key}, 1));
    CHECK(numsub(cluster.shard(2), "__keyspace@0__:" + key) == 1);
    CHECK(show(subscriber.command({"SUBSCRIBE", "__keyevent@0__:expired"})) ==
          frame({"subscribe", "__keyevent@0__:expired"}, 2));
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(numsub(cluster.shard(s), "__keyevent@0__:expired") == 1);
    REQUIRE(client.command({"INCR", key}).integer == 1);
    CHECK(show(subscriber.get_reply()) == frame({"message", "__keyspace@0__:" + key, "incrby"}));
    // Keys on every shard expire: each shard's expired event arrives once.
    std::multiset<std::string> expected;
    for (const auto& k : keys) {
      REQUIRE(client.command({"SET", k + ":t", "v", "PX", "30"}).is_ok());
      expected.insert(frame({"message", "__keyevent@0__:expired", k + ":t"}));
    }
    std::multiset<std::string> received;
    for (std::size_t i = 0; i < expected.size(); ++i) received.insert(show(subscriber.get_reply()));
    CHECK(received == expected);
    CHECK(show(subscriber.command({"UNSUBSCRIBE", "__keyevent@0__:expired"})) ==
          frame({"unsubscribe", "__keyevent@0__:expired"}, 1));
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(numsub(cluster.shard(s), "__keyevent@0__:expired") == 0);
  }

  SECTION("evicted events from a shard under maxmemory") {
    auto subscriber = cluster.client();
    CHECK(show(subscriber.command({"SUBSCRIBE", "__keyevent@0__:evicted"})) ==
          frame({"subscribe", "__keyevent@0__:evicted"}, 1));
    auto direct = cluster.shard(1).client();
    std::string memory = direct.command({"INFO", "memory"}).str;
    long long used = std::stoll(memory.substr(memory.find("used_memory:") + 12));
    REQUIRE(direct.command({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}).is_ok());
    REQUIRE(direct.command({"CONFIG", "SET", "maxmemory", std::to_string(used + 2000000)}).is_ok());
    std::string big(100000, 'x');
    for (int i = 0; i < 200; ++i)
      REQUIRE(
          client.command({"SET", cluster.key_on(1, "big" + std::to_string(i) + ":"), big}).is_ok());
    auto first = subscriber.get_reply();
    CHECK(first.type == Reply::Type::Array);
    REQUIRE(first.elements.size() == 3);
    CHECK(first.elements[0].str == "message");
    CHECK(first.elements[1].str == "__keyevent@0__:evicted");
    CHECK_FALSE(first.elements[2].str.empty());
    REQUIRE(direct.command({"CONFIG", "SET", "maxmemory", "0"}).is_ok());
  }
}
