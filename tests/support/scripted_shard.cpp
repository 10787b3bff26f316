#include "tests/support/scripted_shard.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace santral::test {

namespace {

enum class Parsed { Complete, NeedMore, Error };

// One RESP array of bulk strings at the front of `input` (what a router sends): its words and
// its length.
Parsed parse_command(std::string_view input, std::vector<std::string>& words, std::size_t& used) {
  words.clear();
  std::size_t at = 0;
  auto number = [&](char type, long long& out) -> Parsed {
    if (at >= input.size()) return Parsed::NeedMore;
    if (input[at] != type) return Parsed::Error;
    auto end = input.find("\r\n", at);
    if (end == std::string_view::npos) return Parsed::NeedMore;
    auto [ptr, ec] = std::from_chars(input.data() + at + 1, input.data() + end, out);
    if (ec != std::errc() || ptr != input.data() + end) return Parsed::Error;
    at = end + 2;
    return Parsed::Complete;
  };
  long long count = 0;
  if (auto status = number('*', count); status != Parsed::Complete) return status;
  for (long long i = 0; i < count; ++i) {
    long long length = 0;
    if (auto status = number('$', length); status != Parsed::Complete) return status;
    if (length < 0) return Parsed::Error;
    auto size = static_cast<std::size_t>(length);
    if (input.size() < at + size + 2) return Parsed::NeedMore;
    words.emplace_back(input.substr(at, size));
    at += size + 2;
  }
  used = at;
  return Parsed::Complete;
}

std::string upper(std::string word) {
  for (auto& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

// What a router says first on a connection, before its requests.
bool is_handshake(const std::vector<std::string>& words) {
  if (words.empty()) return false;
  auto name = upper(words[0]);
  if (name == "CLIENT") return words.size() < 2 || upper(words[1]) != "LIST";
  return name == "HELLO" || name == "AUTH" || name == "SELECT";
}

bool is_kill(const std::vector<std::string>& words) {
  return words.size() >= 2 && upper(words[0]) == "CLIENT" && upper(words[1]) == "KILL";
}

std::uint64_t id_of(int n) {
  return 7 + static_cast<std::uint64_t>(n);
}

}  // namespace

ScriptedShard::ScriptedShard(bool stall_first) : stall_first_(stall_first) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw std::runtime_error("ScriptedShard: socket");
  int on = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_, 16) != 0)
    throw std::runtime_error("ScriptedShard: bind/listen");
  socklen_t length = sizeof address;
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error("ScriptedShard: pipe");
  thread_ = std::thread([this] { run(); });
}

ScriptedShard::~ScriptedShard() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  char byte = 0;
  (void)!::write(wake_pipe_[1], &byte, 1);
  thread_.join();
  for (auto& connection : connections_)
    if (!connection.closed) ::close(connection.fd);
  ::close(listener_);
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

int ScriptedShard::accepted() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(connections_.size());
}

std::size_t ScriptedShard::unread(int n) const {
  std::lock_guard lock(mutex_);
  if (n >= static_cast<int>(connections_.size())) return 0;
  const auto& connection = connections_[static_cast<std::size_t>(n)];
  if (connection.closed) return 0;
  int bytes = 0;
  if (::ioctl(connection.fd, FIONREAD, &bytes) != 0) return 0;
  return static_cast<std::size_t>(bytes) + connection.inbox.size();
}

std::vector<std::vector<std::string>> ScriptedShard::commands(int n) const {
  std::lock_guard lock(mutex_);
  if (n >= static_cast<int>(connections_.size())) return {};
  return connections_[static_cast<std::size_t>(n)].commands;
}

std::vector<ScriptedShard::Kill> ScriptedShard::kills() const {
  std::lock_guard lock(mutex_);
  return kills_;
}

void ScriptedShard::hold_kills(bool on) {
  {
    std::lock_guard lock(mutex_);
    holding_kills_ = on;
  }
  wake_thread();
}

void ScriptedShard::wake(int n) {
  {
    std::lock_guard lock(mutex_);
    auto& connection = connections_.at(static_cast<std::size_t>(n));
    connection.stalls = false;
    connection.stopped = connection.lost;
  }
  wake_thread();
}

void ScriptedShard::hold_client_ids(bool on) {
  {
    std::lock_guard lock(mutex_);
    holding_client_ids_ = on;
  }
  wake_thread();
}

void ScriptedShard::split_replies(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  split_at_ = bytes;
}

void ScriptedShard::send_rest(int n) {
  std::lock_guard lock(mutex_);
  send_to(n, std::exchange(connections_.at(static_cast<std::size_t>(n)).rest, {}));
}

// Half-closed here, the socket is closed by the shard's thread once it reads the end of it.
void ScriptedShard::drop(int n) {
  std::lock_guard lock(mutex_);
  auto& connection = connections_.at(static_cast<std::size_t>(n));
  if (!connection.closed) ::shutdown(connection.fd, SHUT_RDWR);
}

void ScriptedShard::lose(int n) {
  std::lock_guard lock(mutex_);
  auto& connection = connections_.at(static_cast<std::size_t>(n));
  connection.lost = true;
  connection.stopped = true;
  connection.held_kill.clear();
  connection.held_client_id = false;
}

void ScriptedShard::wake_thread() {
  char byte = 0;
  (void)!::write(wake_pipe_[1], &byte, 1);
}

void ScriptedShard::run() {
  for (;;) {
    std::vector<pollfd> fds{{listener_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    std::vector<int> polled;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      for (std::size_t n = 0; n < connections_.size(); ++n) {
        const auto& connection = connections_[n];
        if (connection.closed || connection.stopped) continue;
        fds.push_back({connection.fd, POLLIN, 0});
        polled.push_back(static_cast<int>(n));
      }
    }
    ::poll(fds.data(), fds.size(), 20);
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    char drain[64];
    while (::read(wake_pipe_[0], drain, sizeof drain) > 0) {
    }
    if (fds[0].revents & POLLIN) accept_one();
    for (std::size_t i = 0; i < polled.size(); ++i)
      if (fds[i + 2].revents != 0) serve(polled[i]);
    // Kills held until now, and what their connections read after them.
    if (!holding_kills_)
      for (std::size_t n = 0; n < connections_.size(); ++n)
        if (!connections_[n].held_kill.empty()) {
          auto words = std::exchange(connections_[n].held_kill, {});
          carry_out_kill(static_cast<int>(n), words);
          connections_[n].stopped = false;
          serve(static_cast<int>(n));
        }
    if (!holding_client_ids_)
      for (std::size_t n = 0; n < connections_.size(); ++n)
        if (std::exchange(connections_[n].held_client_id, false)) {
          send_to(static_cast<int>(n), ":" + std::to_string(id_of(static_cast<int>(n))) + "\r\n");
          connections_[n].stopped = false;
          serve(static_cast<int>(n));
        }
  }
}

void ScriptedShard::accept_one() {
  int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  Connection connection;
  connection.fd = fd;
  connection.stalls = stall_first_ && connections_.empty();
  connections_.push_back(std::move(connection));
}

void ScriptedShard::serve(int n) {
  auto& connection = connections_[static_cast<std::size_t>(n)];
  if (connection.closed || connection.stopped) return;
  if (connection.stalls) {
    // Only the handshake is taken from the socket; the first request stays in it.
    for (;;) {
      char buffer[65536];
      auto got = ::recv(connection.fd, buffer, sizeof buffer, MSG_PEEK | MSG_DONTWAIT);
      if (got <= 0) return;
      std::vector<std::string> words;
      std::size_t used = 0;
      auto status =
          parse_command(std::string_view(buffer, static_cast<std::size_t>(got)), words, used);
      if (status == Parsed::NeedMore) return;
      if (status == Parsed::Error || !is_handshake(words) || is_kill(words)) {
        connection.stopped = true;
        return;
      }
      (void)!::recv(connection.fd, buffer, used, MSG_DONTWAIT);
      connection.commands.push_back(words);
      if (!answer(n, words)) {
        connection.stopped = true;
        return;
      }
    }
  }
  char buffer[65536];
  for (;;) {
    auto got = ::recv(connection.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got == 0) {
      ::close(connection.fd);
      connection.closed = true;
      return;
    }
    if (got < 0) break;
    connection.inbox.append(buffer, static_cast<std::size_t>(got));
  }
  while (!connection.inbox.empty() && !connection.closed) {
    std::vector<std::string> words;
    std::size_t used = 0;
    auto status = parse_command(connection.inbox, words, used);
    if (status == Parsed::NeedMore) return;
    if (status == Parsed::Error) {
      ::close(connection.fd);
      connection.closed = true;
      return;
    }
    connection.inbox.erase(0, used);
    connection.commands.push_back(words);
    if (!answer(n, words)) {
      connection.stopped = true;
      return;
    }
  }
}

bool ScriptedShard::answer(int n, const std::vector<std::string>& words) {
  auto name = words.empty() ? std::string() : upper(words[0]);
  if (is_kill(words)) {
    kills_.push_back({n, words});
    if (holding_kills_) {
      connections_[static_cast<std::size_t>(n)].held_kill = words;
      return false;
    }
    carry_out_kill(n, words);
    return true;
  }
  if (name == "CLIENT" && words.size() >= 2 && upper(words[1]) == "ID") {
    if (holding_client_ids_) {
      connections_[static_cast<std::size_t>(n)].held_client_id = true;
      return false;
    }
    send_to(n, ":" + std::to_string(id_of(n)) + "\r\n");
  } else if (is_handshake(words))
    send_to(n, "+OK\r\n");
  else if (name == "PING")
    reply_to(n, "+PONG\r\n");
  else if (name == "ECHO" && words.size() == 2)
    reply_to(n, "$" + std::to_string(words[1].size()) + "\r\n" + words[1] + "\r\n");
  else if (name == "GET")
    reply_to(n, "$-1\r\n");
  else if (name == "MIGRATE")
    reply_to(n, "+NOKEY\r\n");
  else if (name == "EXISTS")
    reply_to(n, ":0\r\n");
  else
    reply_to(n, "+OK\r\n");
  return true;
}

void ScriptedShard::reply_to(int n, const std::string& bytes) {
  auto& rest = connections_[static_cast<std::size_t>(n)].rest;
  if (!rest.empty()) {
    rest += bytes;  // behind a reply not wholly sent
    return;
  }
  auto now = split_at_ == 0 ? bytes.size() : std::min(split_at_, bytes.size());
  send_to(n, bytes.substr(0, now));
  rest = bytes.substr(now);
}

// As Redis 7: CLIENT KILL ID <id> closes that client (what it had not read is lost with it) and
// answers how many it closed.
void ScriptedShard::carry_out_kill(int n, const std::vector<std::string>& words) {
  int killed = 0;
  for (std::size_t i = 2; i + 1 < words.size(); i += 2) {
    if (upper(words[i]) != "ID") continue;
    std::uint64_t id = 0;
    std::from_chars(words[i + 1].data(), words[i + 1].data() + words[i + 1].size(), id);
    for (std::size_t c = 0; c < connections_.size(); ++c) {
      auto& target = connections_[c];
      if (id_of(static_cast<int>(c)) != id || target.closed) continue;
      ::close(target.fd);
      target.closed = true;
      ++killed;
    }
  }
  send_to(n, ":" + std::to_string(killed) + "\r\n");
}

void ScriptedShard::send_to(int n, const std::string& bytes) {
  auto& connection = connections_[static_cast<std::size_t>(n)];
  if (connection.closed) return;
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    auto wrote = ::send(connection.fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (wrote <= 0) return;
    sent += static_cast<std::size_t>(wrote);
  }
}

}  // namespace santral::test
