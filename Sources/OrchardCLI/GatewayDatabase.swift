import Foundation
import Gateway
import GatewaySQLite

/// The `--database` option: `sqlite:PATH` (or a bare path).
enum GatewayDatabase {
    /// The file path of a `sqlite:PATH` database option.
    static func sqlitePath(_ option: String) throws(UsageError) -> String {
        if option.hasPrefix("sqlite:") {
            let path = String(option.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw UsageError("--database sqlite:PATH needs a path") }
            return path
        }
        if option.contains("://") { throw UsageError("only sqlite:PATH databases are supported here") }
        return option
    }
}
