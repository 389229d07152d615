import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stand-in script of `Tests/Support` running under `python3`: started with its arguments, it prints the port it
/// listens on as its first line. Shared by ``ApplePayStandIn`` and ``ProcessorStandIn``.
struct StandInScript: @unchecked Sendable {
    /// The running process.
    let process: Process
    /// The port the script printed.
    let port: Int

    /// Starts `python3 script arguments…` and waits for its port; `name` says which stand-in in a failure.
    init(script: String, arguments: [String], name: String) throws {
        guard let python = ApplePayStandIn.pythonPath else {
            throw TestCertificateAuthority.Failure(description: "python3 is not installed")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line of standard output is the port, printed once it listens.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            _ = kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestCertificateAuthority.Failure(description: "the \(name) did not print its port")
        }
        self.port = port
    }

    /// Stops the script.
    func stop() {
        guard process.isRunning else { return }
        // SIGKILL: a child inherits the test runner's blocked signals, so SIGTERM could wait forever.
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
