import Foundation
import Gateway
import GatewaySQLite

/// `orchard audit --database sqlite:PATH|postgres://…`: checks the ledger invariants and exits 0 only when all hold.
enum AuditCommand {
    static let command = CLI.Command(
        name: "audit", summary: "check the ledger invariants of a gateway database (exit 0 only when all hold)",
        run: run)

    static let usage = """
        usage: orchard audit --database sqlite:PATH|postgres://USER@HOST:PORT/DB

        Checks, for every payment: no double authorization or capture at the processor, refunds never above
        the captured amount, every settled payment has the webhook event reporting its state, and what the
        gateway captured and refunded equals the sandbox acquirer's books for it (a payment whose capture, void or
        refund is still in flight is left to reconciliation).
        Exit status: 0 all invariants hold, 1 a finding was printed, 2 bad usage or unreadable database.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let database: String
        do {
            let parsed = try Arguments.parse(arguments, options: ["database"])
            database = try parsed.required("database")
            if !GatewayDatabase.isPostgres(database) { _ = try GatewayDatabase.sqlitePath(database) }
        } catch {
            return io.report(error, of: "orchard audit", usage: usage, failure: nil)
        }
        do {
            let store = try GatewayDatabase.openWithoutKey(database)
            let report = try LedgerAudit.run(store: store)
            io.out("payments checked: \(report.paymentsChecked)")
            io.out("unsettled (processing/unknown, left to reconciliation): \(report.unsettled)")
            let rules = [
                ("double_authorization", "no payment authorized twice at the processor"),
                ("double_capture", "no payment captured twice at the processor"),
                ("refunds_exceed_capture", "refunds never exceed the captured amount"),
                ("missing_event", "every settled payment has its event"),
                ("acquirer_books_differ", "the gateway's captures and refunds match the sandbox acquirer's books"),
            ]
            for (rule, text) in rules {
                let count = report.findings.filter { $0.rule == rule }.count
                io.out("\(count == 0 ? "ok  " : "FAIL") \(text)\(count == 0 ? "" : " (\(count))")")
            }
            for finding in report.findings { io.out("finding: \(finding)") }
            io.out(report.holds ? "all invariants hold" : "\(report.findings.count) finding(s)")
            return report.holds ? 0 : 1
        } catch {
            io.err("orchard audit: \(error)")
            return 2
        }
    }
}
