// The c10d (and static) Reader: one SyncClient to the rendezvous store, MULTI_GET in requests
// of rdzv::k_keys_per_request keys.

#include "ddprun/rdzv/state.hpp"
#include "ddprun/store/client.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/batches.hpp"

#include <fmt/format.h>

#include <iterator>

#include "readers.hpp"

namespace ddprun::status {
namespace {

class StoreReader final : public Reader {
 public:
  StoreReader(store::ClientOptions options, std::string where)
      : client_(std::move(options)), where_(std::move(where)) {}

  Result<void> connect() { return client_.connect(); }

  Result<std::vector<std::string>> multi_get(std::vector<std::string> keys) override {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& batch : util::batches(std::move(keys), rdzv::k_keys_per_request)) {
      auto part = client_.multi_get_now(batch);
      if (!part) {
        return part.error();
      }
      std::move(part->begin(), part->end(), std::back_inserter(out));
    }
    return out;
  }

  std::string where() const override { return where_; }

 private:
  store::SyncClient client_;
  std::string where_;
};

}  // namespace

Result<std::unique_ptr<Reader>> open_store_reader(const config::Endpoint& ep,
                                                  const std::optional<std::string>& token,
                                                  std::chrono::milliseconds timeout) {
  store::ClientOptions opts;
  store::use_rdzv_auth(opts, token);
  opts.dialect = store::Dialect::d2;  // MULTI_GET: a ddprun store speaks every dialect
  opts.host = ep.host;
  opts.port = static_cast<std::uint16_t>(ep.port);
  opts.connect_timeout = timeout;
  opts.op_timeout = timeout;
  const std::string where = fmt::format("{}:{}", ep.host, ep.port);
  auto reader = std::make_unique<StoreReader>(opts, where);
  if (auto up = reader->connect(); !up) {
    return make_error(ErrorCode::io, fmt::format("cannot reach the rendezvous store at {}: {}",
                                                 where, up.error().message));
  }
  return std::unique_ptr<Reader>(std::move(reader));
}

}  // namespace ddprun::status
