import Foundation
import Testing

/// A throwaway PostgreSQL 15 cluster of the test's own, on a loopback port in a temporary directory, so a test
/// may stop and restart the server. As root, the server runs as the unprivileged `postgres` user.
final class TemporaryPostgresCluster: @unchecked Sendable {
    static let binDirectory = "/usr/lib/postgresql/15/bin"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: binDirectory + "/pg_ctl") }
    static let unavailableMessage = "PostgreSQL 15 server binaries are not installed in \(binDirectory)"

    let directory: URL
    let port: Int
    /// The superuser URL (`orchard`, trusted on loopback).
    var url: String { "postgres://orchard@127.0.0.1:\(port)/postgres" }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("orchard-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try Self.command("/bin/chown", ["postgres:", directory.path], asServerUser: false)
        }
        port = try Self.freePort()
        try Self.command(
            Self.binDirectory + "/initdb",
            ["-D", directory.path + "/data", "-U", "orchard", "--auth=trust", "--encoding=UTF8", "--no-locale"])
        try start()
    }

    deinit {
        try? Self.command(Self.binDirectory + "/pg_ctl", ["-D", directory.path + "/data", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the server and waits until it accepts connections. `pg_ctl start` is not waited for: the server it
    /// leaves running inherits its descriptors, so the launcher would never see it finish.
    func start() throws {
        let process = Self.process(
            Self.binDirectory + "/pg_ctl",
            [
                "-D", directory.path + "/data", "-l", directory.path + "/server.log", "-o",
                "-c listen_addresses=127.0.0.1 -c port=\(port) -c unix_socket_directories=\(directory.path)", "start",
            ])
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if (try? Self.command(Self.binDirectory + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(port)"])) != nil
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw ClusterError(description: "the server did not start within 60 s")
    }

    /// Stops the server (`-m fast`: sessions are disconnected, as in a restart).
    func stop() throws {
        try Self.command(Self.binDirectory + "/pg_ctl", ["-D", directory.path + "/data", "-m", "fast", "-w", "stop"])
    }

    private static func process(_ path: String, _ arguments: [String], asServerUser: Bool = true) -> Process {
        let process = Process()
        if asServerUser && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return process
    }

    private static func command(_ path: String, _ arguments: [String], asServerUser: Bool = true) throws {
        let process = process(path, arguments, asServerUser: asServerUser)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ClusterError(
                description: "\((path as NSString).lastPathComponent) exited \(process.terminationStatus)")
        }
    }

    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw ClusterError(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct ClusterError: Error, CustomStringConvertible {
        var description: String
    }
}
