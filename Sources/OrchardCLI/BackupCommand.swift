import Foundation
import Gateway
import GatewaySQLite

/// `orchard backup --database sqlite:PATH --to FILE`: a consistent copy of a live SQLite gateway database
/// (``SQLiteBackup``), then the ledger audit on the copy.
enum BackupCommand {
    static let command = CLI.Command(
        name: "backup", summary: "copy a live SQLite gateway database consistently while it serves (online backup)",
        run: run)

    static let usage = """
        usage: orchard backup --database sqlite:PATH --to FILE

        Copies the database with SQLite's online backup API while the gateway serves and writes it: the copy holds
        every transaction committed when the backup began (every payment acknowledged before it). The copy is
        checked with SQLite's integrity check and the ledger audit (orchard audit), made durable, and only then
        given its name; FILE must not exist. The copy's sealed secrets stay sealed: keep the master key (the
        master-key file, or --master-key) safe apart from the backups, since a copy is unreadable without it.
        To restore, stop the gateway and put the copy in place of the database file (no -wal or -shm beside it).
        PostgreSQL: use pg_dump or point-in-time recovery (docs/operations.md).
        Exit status: 0 copied and the audit holds, 1 the backup failed or the audit found something, 2 bad usage.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let source: String
        let destination: String
        do {
            let parsed = try Arguments.parse(arguments, options: ["database", "to"])
            let database = try parsed.required("database")
            if GatewayDatabase.isPostgres(database) {
                throw UsageError("orchard backup copies SQLite databases; back up PostgreSQL with pg_dump")
            }
            source = try GatewayDatabase.sqlitePath(database)
            destination = try parsed.required("to")
        } catch {
            return io.report(error, of: "orchard backup", usage: usage, failure: nil)
        }
        do {
            let report = try SQLiteBackup.copy(from: source, to: destination)
            io.out("copied sqlite:\(source) to \(destination): \(report.pages) pages, \(report.bytes) bytes")
            let audit = try LedgerAudit.run(store: try SQLiteStore(path: destination))
            guard audit.holds else {
                for finding in audit.findings { io.out("finding: \(finding)") }
                io.err("orchard backup: the audit of the copy found \(audit.findings.count) finding(s)")
                return 1
            }
            io.out("audit of the copy: \(audit.paymentsChecked) payments, all invariants hold")
            return 0
        } catch {
            io.err("orchard backup: \(error)")
            return 1
        }
    }
}
