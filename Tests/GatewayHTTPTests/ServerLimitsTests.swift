import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A gate a handler waits at until the test opens it.
final class Gate: @unchecked Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
}

/// A result filled in by a background thread.
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?
    let done = DispatchSemaphore(value: 0)

    func set(_ value: Value) {
        lock.withLock { stored = value }
        done.signal()
    }

    var value: Value? { lock.withLock { stored } }
}

@Suite("HTTP server: body cap, slow clients, graceful shutdown")
struct ServerLimitsTests {
    static func application(gate: Gate? = nil, log: LineCollector? = nil) -> HTTPApplication {
        var router = Router()
        router.get("/healthz") { _, _ in .text("ok") }
        router.post("/v1/echo") { request, _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: request.body)
        }
        router.get("/slow") { _, _ in
            gate?.entered.signal()
            gate?.release.wait()
            return .text("finished")
        }
        let middlewares: [any HTTPMiddleware] = log.map { log in [AccessLogMiddleware { log.append($0) }] } ?? []
        return HTTPApplication(router: router, middlewares: middlewares)
    }

    @Test("a declared oversized body is answered 413 without being read, and the server keeps serving")
    func declaredTooLarge() throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 1_024
        let log = LineCollector()
        let server = try TestServer(configuration: configuration, responder: Self.application(log: log))
        let connection = try RawConnection(port: server.port)
        connection.send(
            "POST /v1/echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n"
                + String(repeating: "[", count: 100))
        let (data, closed) = connection.readUntilClosed()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 413"))
        #expect(text.contains("\"code\":\"body_too_large\""))
        #expect(text.lowercased().contains("request-id: req_"))
        #expect(closed)
        #expect(log.lines.first?.contains("\"error_code\":\"body_too_large\"") == true)

        let client = CurlClient()
        let after = try client.request(
            "POST", server.base + "/v1/echo", headers: ["Content-Type": "application/json"],
            body: Data(String(repeating: "1", count: 1_024).utf8))
        #expect(after.status == 200)
        #expect(after.body.count == 1_024)
    }

    @Test("a chunked body growing past the cap is answered 413", arguments: [1_025, 200_000])
    func chunkedTooLarge(size: Int) throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 1_024
        let server = try TestServer(configuration: configuration, responder: Self.application())
        let connection = try RawConnection(port: server.port)
        let chunk = String(repeating: "7", count: size)
        connection.send(
            "POST /v1/echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(size, radix: 16) + "\r\n" + chunk + "\r\n0\r\n\r\n")
        let (data, _) = connection.readUntilClosed()
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("HTTP/1.1 413"))
        #expect(try CurlClient().request("GET", server.base + "/healthz").status == 200)
    }

    @Test("a chunked body far past the cap gets the connection closed")
    func chunkedFarTooLarge() throws {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 1_024
        let server = try TestServer(configuration: configuration, responder: Self.application())
        let connection = try RawConnection(port: server.port)
        connection.send(
            "POST /v1/echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        let chunk = Data(("10000\r\n" + String(repeating: "7", count: 0x10000) + "\r\n").utf8)
        var sent = 0
        while sent < 1_024 && connection.send(chunk) { sent += 1 }
        let (data, closed) = connection.readUntilClosed()
        #expect(closed)
        #expect(!String(decoding: data, as: UTF8.self).contains("200 OK"))
        #expect(sent < 1_024, "the server should stop reading well before 64 MiB")
        #expect(try CurlClient().request("GET", server.base + "/healthz").status == 200)
    }

    @Test("a client that stalls mid-headers is disconnected after the connection timeout")
    func slowClient() throws {
        var configuration = ServerConfiguration()
        configuration.connectionTimeoutSeconds = 1
        let server = try TestServer(configuration: configuration, responder: Self.application())
        let connection = try RawConnection(port: server.port, receiveTimeoutSeconds: 30)
        connection.send("GET /healthz HTTP/1.1\r\nHost: te")
        let (data, closed) = connection.readUntilClosed()
        #expect(closed, "the server should close a stalled connection")
        #expect(!String(decoding: data, as: UTF8.self).contains("200 OK"))
        #expect(try CurlClient().request("GET", server.base + "/healthz").status == 200)
    }

    @Test("stop() lets a request in flight finish, refuses new connections, then returns")
    func gracefulShutdown() throws {
        let gate = Gate()
        var configuration = ServerConfiguration()
        configuration.shutdownTimeoutSeconds = 60
        let server = try TestServer(configuration: configuration, responder: Self.application(gate: gate))
        let base = server.base
        let inFlight = Box<Result<ClientResponse, any Error>>()
        Thread.detachNewThread {
            inFlight.set(Result { try CurlClient().request("GET", base + "/slow") })
        }
        gate.entered.wait()
        #expect(server.server.requestsInFlight == 1)
        let registry = MetricsRegistry()
        server.server.registerMetrics(in: registry)
        #expect(registry.render().contains("orchard_http_requests_in_flight 1\n"))
        #expect(registry.render().contains("orchard_http_open_connections 1\n"))

        let stopped = Box<Bool>()
        let httpServer = server.server
        Thread.detachNewThread {
            httpServer.stop()
            stopped.set(true)
        }
        while server.server.isAcceptingConnections { usleep(10_000) }
        #expect(throws: (any Error).self) { try CurlClient().request("GET", base + "/healthz") }
        #expect(stopped.value == nil, "stop() must wait for the request in flight")

        gate.release.signal()
        inFlight.done.wait()
        let response = try #require(try inFlight.value?.get())
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(response.headers["Connection"]?.lowercased() == "close")
        stopped.done.wait()
        #expect(stopped.value == true)
        #expect(server.server.requestsInFlight == 0)
    }

    @Test("stop() while connections open and close on every worker, many times over, never aborts the process")
    func stopUnderChurn() throws {
        // Each round: a pool of workers, clients opening a connection per request, then stop() in the middle of it.
        // libmicrohttpd's epoll mode had a race here (a worker and quiesce both removing the listening socket from
        // the worker's epoll set) that aborted the whole process; the server must use a mode without it.
        for _ in 0..<250 {
            var configuration = ServerConfiguration()
            configuration.threadPoolSize = 4
            configuration.shutdownTimeoutSeconds = 5
            let server = try TestServer(configuration: configuration, responder: Self.application())
            let port = server.port
            let stopClients = Box<Bool>()
            let finished = DispatchGroup()
            for _ in 0..<4 {
                finished.enter()
                Thread.detachNewThread {
                    defer { finished.leave() }
                    while stopClients.value == nil {
                        guard let connection = try? RawConnection(port: port, receiveTimeoutSeconds: 2) else { return }
                        connection.send("GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                        _ = connection.readUntilClosed()
                    }
                }
            }
            usleep(20_000)
            server.server.stop(timeoutSeconds: 5)
            #expect(!server.server.isAcceptingConnections)
            stopClients.set(true)
            finished.wait()
        }
    }

    @Test("port 0 picks a free port; a taken port is a clear start error")
    func ports() throws {
        let first = try TestServer(responder: Self.application())
        #expect(first.port > 0)
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = first.port
        let second = HTTPServer(configuration: configuration, responder: Self.application(), messages: { _ in })
        let error = #expect(throws: HTTPServerError(.startFailed, "")) { try second.start() }
        #expect(error?.reason.hasPrefix("could not listen on 127.0.0.1:\(first.port)") == true)
        configuration.host = "not-an-ip"
        let third = HTTPServer(configuration: configuration, responder: Self.application(), messages: { _ in })
        #expect(throws: HTTPServerError(.invalidAddress, "")) { try third.start() }
    }

    @Test("the shutdown signal handler calls its closure once")
    func signals() throws {
        let received = Box<Int32>()
        let handler = ShutdownSignalHandler(signals: [SIGUSR2]) { number in received.set(number) }
        // A process-directed signal, as `kill -TERM` sends. The source is registered asynchronously and until then
        // the signal is ignored, so repeat it until it is seen.
        var attempts = 0
        while received.done.wait(timeout: .now() + 0.05) == .timedOut && attempts < 600 {
            kill(getpid(), SIGUSR2)
            attempts += 1
        }
        #expect(received.value == SIGUSR2)
        handler.cancel()
        signal(SIGUSR2, SIG_IGN)
    }

    @Test("runUntilShutdownSignal blocks until the signal, then stops the server")
    func runUntilSignal() throws {
        signal(SIGUSR1, SIG_IGN)
        let server = try TestServer(responder: Self.application())
        let httpServer = server.server
        let done = Box<Int32>()
        Thread.detachNewThread {
            while done.value == nil {
                kill(getpid(), SIGUSR1)
                usleep(50_000)
            }
        }
        let received = httpServer.runUntilShutdownSignal(signals: [SIGUSR1])
        done.set(received)
        #expect(received == SIGUSR1)
        #expect(!httpServer.isAcceptingConnections)
        #expect(throws: (any Error).self) { try CurlClient().request("GET", server.base + "/healthz") }
    }

    @Test("connections beyond the per-IP limit are refused")
    func perIPLimit() throws {
        var configuration = ServerConfiguration()
        configuration.perIPConnectionLimit = 1
        let server = try TestServer(configuration: configuration, responder: Self.application())
        do {
            let holder = try RawConnection(port: server.port)
            holder.send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
            #expect(holder.readResponse().hasPrefix("HTTP/1.1 200"))
            let refused = try? CurlClient().request("GET", server.base + "/healthz")
            #expect(refused == nil)
        }
        // Once the first connection is closed, the address may connect again.
        var status: Int?
        for _ in 0..<500 where status == nil {
            status = try? CurlClient().request("GET", server.base + "/healthz").status
            if status == nil { usleep(20_000) }
        }
        #expect(status == 200)
    }
}
