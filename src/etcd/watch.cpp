// A watch stream: POST /v3/watch with a create_request, then one JSON message per line on a
// chunked reply that never ends by itself. The first message says "created"; a watch whose start
// revision was compacted gets "created" and then "canceled" with compact_revision (as measured).
// When the member goes away, the stream is opened again on the next member from the revision
// after the last one delivered, so the consumer sees each change once.

#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/codec.hpp"

#include <fmt/format.h>

#include "connection.hpp"

namespace ddprun::etcd {

struct Watch::Stream {
  std::unique_ptr<Connection> conn;
  StreamParser parser;
};

Watch::Watch(Client& client, WatchRequest request)
    : client_(client), request_(std::move(request)) {}

Watch::~Watch() { cancel(); }

void Watch::cancel() {
  cancelled_ = true;
  if (stream_ && stream_->conn) {
    stream_->conn->close();
  }
}

std::string Watch::member() const {
  return stream_ && stream_->conn ? to_string(stream_->conn->endpoint()) : std::string();
}

asio::awaitable<Result<std::unique_ptr<Watch>>> Client::watch(WatchRequest w) {
  std::unique_ptr<Watch> watch(new Watch(*this, std::move(w)));
  auto opened = co_await watch->open();
  if (!opened) {
    co_return opened.error();
  }
  co_return watch;
}

void Watch::note_revision(const WatchMessage& m) {
  for (const WatchEvent& e : m.events) {
    last_revision_ = std::max(last_revision_, e.kv.mod_revision);
  }
}

asio::awaitable<Result<void>> Watch::open_on_current() {
  auto conn = co_await client_.checkout();
  if (!conn) {
    co_return conn.error();
  }
  stream_ = std::make_unique<Stream>();
  stream_->conn = std::move(*conn);
  stream_->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  lines_.clear();
  partial_.clear();
  WatchRequest req = request_;
  if (last_revision_ > 0) {
    req.start_revision = last_revision_ + 1;
  }
  const auto timeout = client_.options().call_timeout;
  auto sent =
      co_await stream_->conn->send("/v3/watch", render_watch_create(req), client_.token_, timeout);
  if (!sent) {
    co_return sent.error();
  }
  auto header = co_await stream_->conn->read_header(stream_->parser, timeout);
  if (!header) {
    co_return header.error();
  }
  if (stream_->parser.get().result_int() != 200) {
    co_return make_error(ErrorCode::protocol, fmt::format("etcd watch at {}: HTTP {}",
                                                          to_string(stream_->conn->endpoint()),
                                                          stream_->parser.get().result_int()));
  }
  auto first = co_await next_line();
  if (!first) {
    co_return first.error();
  }
  auto created = parse_watch_message(*first);
  if (!created) {
    co_return created.error();
  }
  if (!created->created) {
    co_return make_error(ErrorCode::protocol, "etcd watch: the first message is not \"created\"");
  }
  if (created->canceled) {
    lines_.insert(lines_.begin(),
                  std::move(*first));  // created and cancelled at once: next() says so
  }
  if (last_revision_ == 0) {
    last_revision_ = req.start_revision > 0 ? req.start_revision - 1 : created->revision;
  }
  co_return Result<void>{};
}

asio::awaitable<Result<void>> Watch::open() {
  std::vector<std::string> failures;
  for (std::size_t tries = 0; tries < client_.options().endpoints.size(); ++tries) {
    auto opened = co_await open_on_current();
    if (opened || cancelled_ || opened.error().code == ErrorCode::config) {
      co_return opened;
    }
    failures.push_back(opened.error().message);
    if (stream_ && stream_->conn) {
      stream_->conn->close();
    }
    client_.fail_over();
  }
  co_return make_error(ErrorCode::io, fmt::format("etcd watch on \"{}\": no member answered: {}",
                                                  request_.key, fmt::join(failures, "; ")));
}

asio::awaitable<Result<std::string>> Watch::next_line() {
  while (lines_.empty()) {
    if (cancelled_) {
      co_return make_error(ErrorCode::closed, "etcd watch: cancelled");
    }
    if (stream_->parser.is_done()) {
      co_return make_error(ErrorCode::io, "etcd watch: the member ended the stream");
    }
    auto r = co_await stream_->conn->read_some(stream_->parser);
    if (cancelled_) {
      co_return make_error(ErrorCode::closed, "etcd watch: cancelled");
    }
    if (!r) {
      co_return r.error();
    }
    auto& body = stream_->parser.get().body();
    partial_ += body;
    body.clear();
    lines_ = take_lines(partial_);
  }
  std::string line = std::move(lines_.front());
  lines_.erase(lines_.begin());
  co_return line;
}

asio::awaitable<Result<WatchMessage>> Watch::next() {
  while (!cancelled_ && !ended_) {
    auto line = co_await next_line();
    if (!line) {
      if (cancelled_) {
        break;
      }
      // The stream broke: resume on a member, after the last change delivered.
      stream_->conn->close();
      if (stream_->conn->index() == client_.current_) {
        client_.fail_over();
      }
      auto reopened = co_await open();
      if (!reopened) {
        ended_ = true;
        co_return reopened.error();
      }
      continue;
    }
    auto m = parse_watch_message(*line);
    if (!m) {
      ended_ = true;
      co_return m.error();
    }
    note_revision(*m);
    if (m->canceled) {
      ended_ = true;
      stream_->conn->close();
    }
    co_return m;
  }
  co_return make_error(ErrorCode::closed,
                       cancelled_ ? "etcd watch: cancelled" : "etcd watch: ended by etcd");
}

}  // namespace ddprun::etcd
