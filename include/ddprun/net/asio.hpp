#pragma once
// The only header that includes Boost.Asio. It fixes two Boost 1.74 traps:
// g++ 12 needs <utility> before awaitable.hpp, and clang 14 needs the coroutine macros.

#include <utility>

#if defined(__clang__)
#ifndef BOOST_ASIO_HAS_CO_AWAIT
#define BOOST_ASIO_HAS_CO_AWAIT 1
#endif
#ifndef BOOST_ASIO_HAS_STD_COROUTINE
#define BOOST_ASIO_HAS_STD_COROUTINE 1
#endif
#endif

#include <boost/asio.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ddprun {
namespace asio = boost::asio;
}  // namespace ddprun
