#include "router/backend/draining_connections.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kTick = std::chrono::milliseconds(100);
// After a kill that could not be sent or was lost with its connection: sent again, sooner
// first. After an answer that proves nothing (no permission): later, the ACL may change.
constexpr auto kFirstPause = std::chrono::milliseconds(50);
constexpr auto kLongestPause = std::chrono::milliseconds(1000);
constexpr auto kRefusedPause = std::chrono::milliseconds(5000);

// The shard's own answer that the client is gone: CLIENT KILL ID answers how many clients it
// killed (:1 now, :0 gone before); the old form +OK or "No such client".
bool proves_gone(std::string_view reply) {
  return reply.starts_with(":") || reply.starts_with("+OK") ||
         reply.find("No such client") != std::string_view::npos;
}

// An error Santral made (the kill's connection broke, or its shard is marked down): the shard
// said nothing.
bool santral_made(std::string_view reply) {
  return reply.starts_with("-ERR santral:");
}

// Every loop's service, for everywhere().
std::mutex services_lock;
std::vector<const DrainingConnections*>& services() {
  static std::vector<const DrainingConnections*> all;
  return all;
}

}  // namespace

struct DrainingConnections::Listening {
  explicit Listening(Socket given) : socket(std::move(given.socket)), unanswered(given.unanswered) {
    inbox.assign(given.read.begin(), given.read.end());
    inbox.resize(std::max<std::size_t>(inbox.size() * 2, 4096));
    end = given.read.size();
  }
  void close() {
    boost::system::error_code ignored;
    socket.close(ignored);
  }
  boost::asio::ip::tcp::socket socket;
  std::size_t unanswered;
  std::vector<char> inbox;
  std::size_t start = 0, end = 0;
  protocol::ReplyScanner scanner;
};

// The kills' answers, by the entry's serial; the service may be gone when one comes late.
class DrainingConnections::KillAnswers final : public ReplySink {
 public:
  explicit KillAnswers(DrainingConnections& owner) : owner_(&owner) {}
  void deliver(std::uint64_t serial, std::uint32_t /*fragment*/, std::string_view reply) override {
    if (owner_) owner_->answered(serial, reply);
  }
  void forget() { owner_ = nullptr; }

 private:
  DrainingConnections* owner_;
};

DrainingConnections::DrainingConnections(boost::asio::io_context& io)
    : boost::asio::execution_context::service(io),
      io_(io),
      timer_(io),
      answers_(new KillAnswers(*this)) {
  std::lock_guard guard(services_lock);
  services().push_back(this);
}

DrainingConnections::~DrainingConnections() {
  answers_->forget();
  std::lock_guard guard(services_lock);
  std::erase(services(), this);
}

std::vector<DrainingConnections::Draining> DrainingConnections::everywhere() {
  std::lock_guard guard(services_lock);
  std::vector<Draining> out;
  for (const auto* service : services()) {
    auto more = service->list();
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

DrainingConnections& DrainingConnections::of(boost::asio::io_context& io) {
  return boost::asio::use_service<DrainingConnections>(io);
}

void DrainingConnections::shutdown() {
  stopped_ = true;
  answers_->forget();
  timer_.cancel();
  for (auto& entry : entries_)
    if (entry.listening) entry.listening->close();
  for (auto& [address, killer] : killers_) killer->connection->stop();
  killers_.clear();
  waiters_.clear();
}

std::optional<DrainingConnections::Socket> DrainingConnections::take_socket(Stream& stream,
                                                                            bool answers,
                                                                            std::size_t unanswered,
                                                                            std::string read) {
  auto& socket = stream.socket();
  if (stream.tls() || !answers || !socket.is_open()) return std::nullopt;
  boost::system::error_code ignored;
  socket.cancel(ignored);  // its connection's own reads and waits end, reading nothing
  return Socket{std::move(socket), unanswered, std::move(read)};
}

void DrainingConnections::add(const BackendTarget& target, std::uint64_t client_id,
                              std::shared_ptr<const config::Config> config, std::string why,
                              std::optional<Socket> socket) {
  if (stopped_) return;
  auto now = Clock::now();
  Entry entry;
  entry.serial = next_serial_++;
  entry.target = target;
  entry.client_id = client_id;
  entry.why = std::move(why);
  entry.since = entry.kill_at = now;
  if (socket) entry.listening = std::make_shared<Listening>(std::move(*socket));
  entry.target.profile = {};  // the kill is asked in database 0, in RESP2
  auto& killer_of = killers_[entry.target.address.text()];
  if (!killer_of) killer_of = std::make_unique<Killer>();
  if (!killer_of->patience) killer_of->patience.emplace(config->timeouts.request);
  killer_of->config = std::move(config);
  if (client_id == 0) {
    entry.problem =
        "the server did not tell its CLIENT ID, so Santral cannot have it end this connection; "
        "it waits for its answers on it";
    spdlog::error(
        "shard '{}' ({}): a connection Santral gave up on ({}) may still run requests, and "
        "the server refused CLIENT ID, so it cannot be ended: whatever waits for it (a move's "
        "switch) waits; allow CLIENT ID and CLIENT KILL for Santral's user on the shard",
        entry.target.shard_name, entry.target.address.text(), entry.why);
  }
  spdlog::debug("shard '{}' ({}): connection {} is draining ({})", entry.target.shard_name,
                entry.target.address.text(), client_id, entry.why);
  {
    std::lock_guard guard(lock_);
    entries_.push_back(std::move(entry));
  }
  auto serial = entries_.back().serial;
  if (auto listening = entries_.back().listening) heard(serial, listening);  // what it read
  if (!find(serial)) return;  // every answer was in already
  if (client_id != 0) kill(*find(serial));
  if (!ticking_) {
    ticking_ = true;
    tick();
  }
}

DrainingConnections::Killer& DrainingConnections::killer(const Entry& entry) {
  auto& killer = *killers_[entry.target.address.text()];
  if (!killer.connection || killer.connection->state() == BackendConnection::State::Stopped) {
    // A kill that runs late ends a client that is gone anyway. Not draining, this connection
    // also logs in as backend.username/password and passes the fleet's write fence
    // (backend_connection.cpp): a rejoining router waits for these kills.
    BackendConnection::Options options;
    options.drains = false;
    killer.connection =
        BackendConnection::open(io_, entry.target, killer.config, killer.stats, options);
  }
  return killer;
}

void DrainingConnections::kill(Entry& entry) {
  entry.killing = true;
  entry.kill_sent = Clock::now();
  std::string id = std::to_string(entry.client_id);
  std::string_view args[] = {"CLIENT", "KILL", "ID", id};
  std::string request;
  protocol::RespWriter(request).command(args);
  // No deadline: a stalled shard answers once it wakes, and that answer is the proof.
  killer(entry).connection->send(request, answers_, entry.serial, 0, false);
}

void DrainingConnections::listen(std::uint64_t serial,
                                 const std::shared_ptr<Listening>& listening) {
  if (listening->end == listening->inbox.size()) {
    if (listening->start > 0) {
      std::copy(listening->inbox.begin() + static_cast<std::ptrdiff_t>(listening->start),
                listening->inbox.begin() + static_cast<std::ptrdiff_t>(listening->end),
                listening->inbox.begin());
      listening->end -= listening->start;
      listening->start = 0;
    } else {
      listening->inbox.resize(listening->inbox.size() * 2);
    }
  }
  listening->socket.async_read_some(
      boost::asio::buffer(listening->inbox.data() + listening->end,
                          listening->inbox.size() - listening->end),
      [this, serial, listening](boost::system::error_code ec, std::size_t bytes) {
        if (ec) return listening->close();  // gone, or proven: the kill is the proof left
        listening->end += bytes;
        heard(serial, listening);
      });
}

// Counts the answers read on a given-up socket: once every request on it is answered, nothing
// more from it can run (pushes, RESP3 '>', are not answers). Then it is proven.
void DrainingConnections::heard(std::uint64_t serial, const std::shared_ptr<Listening>& listening) {
  if (stopped_ || !find(serial)) return listening->close();
  while (listening->start < listening->end && listening->unanswered > 0) {
    std::size_t size = 0;
    std::string_view input(listening->inbox.data() + listening->start,
                           listening->end - listening->start);
    auto status = listening->scanner.scan(input, size);
    if (status == protocol::ScanStatus::NeedMore) break;
    if (status == protocol::ScanStatus::Error) return listening->close();
    if (input.front() != '>') --listening->unanswered;
    listening->start += size;
  }
  if (listening->unanswered == 0) {
    listening->close();
    return prove(serial);
  }
  listen(serial, listening);
}

void DrainingConnections::answered(std::uint64_t serial, std::string_view reply) {
  Entry* entry = find(serial);
  if (!entry || renewing_) return;
  entry->killing = false;
  bool ours = santral_made(reply);
  if (!ours) killers_[entry->target.address.text()]->patience->answered();  // not silent
  if (proves_gone(reply)) return prove(serial);
  std::string text = protocol::line_text(reply);
  if (!ours && entry->problem != text)
    spdlog::error(
        "shard '{}' ({}): CLIENT KILL ID {} answered '{}', so a connection Santral gave up on "
        "({}) may still run requests there and whatever waits for it (a move's switch) waits; "
        "allow CLIENT ID and CLIENT KILL for Santral's user on the shard",
        entry->target.shard_name, entry->target.address.text(), entry->client_id, text, entry->why);
  {
    std::lock_guard guard(lock_);
    entry->problem = std::move(text);
  }
  entry->pause = ours ? std::clamp(entry->pause * 2, std::chrono::milliseconds(kFirstPause),
                                   std::chrono::milliseconds(kLongestPause))
                      : std::chrono::milliseconds(kRefusedPause);
  entry->kill_at = Clock::now() + entry->pause;
}

void DrainingConnections::prove(std::uint64_t serial) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [serial](const Entry& e) { return e.serial == serial; });
  if (it == entries_.end()) return;
  auto waited = Clock::now() - it->since;
  if (waited > std::chrono::seconds(1))
    spdlog::info("shard '{}' ({}): connection {} proven ended after {} ms (it was given up on: {})",
                 it->target.shard_name, it->target.address.text(), it->client_id,
                 std::chrono::duration_cast<std::chrono::milliseconds>(waited).count(), it->why);
  if (it->listening) it->listening->close();
  {
    std::lock_guard guard(lock_);
    entries_.erase(it);
  }
  ++proven_;
  std::vector<std::function<void()>> ready;
  std::erase_if(waiters_, [&](Waiter& waiter) {
    std::erase(waiter.serials, serial);
    if (!waiter.serials.empty()) return false;
    ready.push_back(std::move(waiter.proven));
    return true;
  });
  for (auto& proven : ready) proven();
}

DrainingConnections::Entry* DrainingConnections::find(std::uint64_t serial) {
  for (auto& entry : entries_)
    if (entry.serial == serial) return &entry;
  return nullptr;
}

void DrainingConnections::wait_for(std::vector<std::uint64_t> serials,
                                   std::function<void()> proven) {
  if (serials.empty()) return proven();
  waiters_.push_back({std::move(serials), std::move(proven)});
}

void DrainingConnections::after(const std::string& address, std::function<void()> proven) {
  std::vector<std::uint64_t> serials;
  for (const auto& entry : entries_)
    if (entry.target.address.text() == address) serials.push_back(entry.serial);
  wait_for(std::move(serials), std::move(proven));
}

void DrainingConnections::after_all(std::function<void()> proven) {
  std::vector<std::uint64_t> serials;
  for (const auto& entry : entries_) serials.push_back(entry.serial);
  wait_for(std::move(serials), std::move(proven));
}

bool DrainingConnections::draining(const std::string& address) const {
  return std::any_of(entries_.begin(), entries_.end(), [&address](const Entry& entry) {
    return entry.target.address.text() == address;
  });
}

std::vector<DrainingConnections::Draining> DrainingConnections::list() const {
  std::lock_guard guard(lock_);
  std::vector<Draining> out;
  auto now = Clock::now();
  for (const auto& entry : entries_)
    out.push_back({entry.target.shard_name, entry.target.address.text(), entry.client_id, entry.why,
                   now - entry.since, entry.problem});
  return out;
}

// While anything drains: kills that failed are sent again when their pause is over, and the
// kill connections' own deadlines (a connect that hangs) are checked.
void DrainingConnections::tick() {
  if (stopped_) return;
  auto now = Clock::now();
  for (auto& [address, killer] : killers_)
    if (killer->connection) killer->connection->check_deadlines(now);
  renew_silent_killers(now);
  for (auto& entry : entries_)
    if (!entry.killing && entry.client_id != 0 && entry.kill_at <= now) kill(entry);
  if (entries_.empty()) {
    ticking_ = false;
    // Idle kill connections close; the next drain opens one again.
    for (auto& [address, killer] : killers_)
      if (killer->connection) killer->connection->stop();
    killers_.clear();
    return;
  }
  timer_.expires_after(kTick);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

// A kill out longer than its shard's patience (proof_patience.h): that kill connection is closed
// (a kill running late there ends a client that is to end anyway) and every kill it carried goes
// again on a new one, at once.
void DrainingConnections::renew_silent_killers(Clock::time_point now) {
  for (auto& item : killers_) {
    const std::string& address = item.first;
    Killer* killer = item.second.get();
    if (!killer->connection) continue;
    auto silent = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
      return entry.killing && entry.target.address.text() == address &&
             now - entry.kill_sent >= killer->patience->now();
    });
    if (silent == entries_.end()) continue;
    spdlog::warn(
        "shard '{}' ({}): CLIENT KILL ID {} unanswered for {} ms; sending it again on a new "
        "connection (a stalled shard answers both once it wakes; a link that lost it never "
        "would)",
        silent->target.shard_name, address, silent->client_id,
        std::chrono::duration_cast<std::chrono::milliseconds>(now - silent->kill_sent).count());
    renewing_ = true;
    killer->connection->stop();
    renewing_ = false;
    killer->connection.reset();
    killer->patience->ran_out();
    for (auto& entry : entries_)
      if (entry.killing && entry.target.address.text() == address) {
        entry.killing = false;
        entry.kill_at = now;
      }
  }
}

}  // namespace santral::router
