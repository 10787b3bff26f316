#include "router/acl/access_check.h"

#include <algorithm>
#include <vector>

#include "protocol/glob_pattern.h"
#include "protocol/key_extraction.h"

namespace santral::router {

using protocol::CommandSpec;
using protocol::KeySpec;
using protocol::StatefulVerb;

namespace {

// Redis's CMD_NO_AUTH commands: a user may always authenticate again.
bool always_allowed(const CommandSpec& spec) {
  return spec.local == protocol::LocalHandler::Auth || spec.local == protocol::LocalHandler::Hello;
}

// Where the command's channels are: none, its first argument (PUBLISH), or every argument.
enum class Channels : std::uint8_t { None, First, All, AllPatterns };

Channels channels_of(const CommandSpec& spec) {
  if (spec.routing == protocol::Routing::Channel) return Channels::First;
  if (spec.verb == StatefulVerb::Subscribe || spec.verb == StatefulVerb::ShardSubscribe)
    return Channels::All;
  if (spec.verb == StatefulVerb::PatternSubscribe) return Channels::AllPatterns;
  return Channels::None;
}

}  // namespace

bool key_allowed(const config::Permissions& user, std::string_view key, std::uint16_t flags) {
  if (user.all_keys) return true;
  std::uint8_t needed = 0;
  if (flags & KeySpec::kAccess) needed |= config::kReadKeys;
  if (flags & (KeySpec::kInsert | KeySpec::kDelete | KeySpec::kUpdate))
    needed |= config::kWriteKeys;
  for (const auto& pattern : user.keys)
    if ((pattern.access & needed) == needed && protocol::glob_matches(pattern.glob, key))
      return true;
  return false;
}

bool channel_allowed(const config::Permissions& user, std::string_view channel, bool pattern) {
  if (user.all_channels) return true;
  for (const auto& allowed : user.channels)
    if (pattern ? allowed == channel : protocol::glob_matches(allowed, channel)) return true;
  return false;
}

AccessVerdict check_access(const config::Permissions& user, const CommandSpec& spec,
                           std::span<const std::string_view> args) {
  if (!user.all_commands && !always_allowed(spec) && !user.allows(spec))
    return {AccessDenial::Command, 0};
  if (!user.all_keys && !spec.key_specs.empty()) {
    thread_local std::vector<protocol::KeyReference> keys;
    // Keys that cannot be found (a bad numkeys) are not checked: the command fails anyway.
    if (protocol::find_key_references(spec, args, keys)) {
      for (const auto& key : keys)
        if (!key_allowed(user, args[key.position], key.flags))
          return {AccessDenial::Key, key.position};
    }
  }
  Channels channels = channels_of(spec);
  if (!user.all_channels && channels != Channels::None) {
    std::size_t end =
        channels == Channels::First ? std::min<std::size_t>(2, args.size()) : args.size();
    for (std::size_t i = 1; i < end; ++i)
      if (!channel_allowed(user, args[i], channels == Channels::AllPatterns))
        return {AccessDenial::Channel, static_cast<std::uint32_t>(i)};
  }
  return {};
}

}  // namespace santral::router
