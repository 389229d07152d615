import Foundation

/// The bad rows of an uploaded table, gathered so one refusal names every row to fix (up to ``limit``).
struct RowProblems {
    /// The most rows one refusal lists; the message counts the others.
    static let limit = 100

    private(set) var problems: [GatewayError.RowProblem] = []
    private(set) var total = 0

    mutating func add(row: Int, _ message: String) {
        total += 1
        if problems.count < Self.limit { problems.append(.init(row: row, message: message)) }
    }

    /// Throws `code` with the gathered rows when there are any; `label` names a row in the message
    /// (`line` for CSV, `row` for JSON).
    func check(_ code: GatewayError.Code, label: String) throws(GatewayError) {
        guard let first = problems.first else { return }
        var reason = "\(label) \(first.row): \(first.message)"
        if total > 1 { reason += " (and \(total - 1) more bad \(total == 2 ? "row" : "rows"))" }
        var error = GatewayError(code, reason)
        error.rows = problems
        throw error
    }

    /// A refusal of the whole table, reported as row `row` (a header, or a limit of the table).
    static func refuse(_ code: GatewayError.Code, row: Int, label: String, _ message: String) -> GatewayError {
        var error = GatewayError(code, "\(label) \(row): \(message)")
        error.rows = [.init(row: row, message: message)]
        return error
    }
}

/// One row of a co-brand table as written: BINs of 6 to 8 digits and the affiliate code.
public struct CoBrandRow: Sendable, Hashable {
    /// The first BIN of the range; a shorter one is padded with `0` to 8 digits.
    public var binLow: String
    /// The last BIN of the range; a shorter one is padded with `9` to 8 digits.
    public var binHigh: String
    /// At most 20 ASCII letters or digits (TapPay's affiliate code).
    public var affiliateCode: String

    public init(binLow: String, binHigh: String, affiliateCode: String) {
        self.binLow = binLow
        self.binHigh = binHigh
        self.affiliateCode = affiliateCode
    }
}

extension MerchantRegistry {
    /// The CSV header of a co-brand table (`PUT /v1/co-brand-table` as `text/csv`).
    public static let coBrandCSVHeader = "bin_low,bin_high,affiliate_code"

    /// Whether `code` is an affiliate code: 1 to 20 ASCII letters or digits.
    public static func isAffiliateCode(_ code: String) -> Bool {
        (1...20).contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// The merchant's co-brand table, ordered by first BIN.
    public func coBrandTable(merchantID: String) throws(GatewayError) -> [CoBrandRange] {
        try gatewayThrowing { try store.read { try $0.coBrandRanges(merchantID: merchantID) } }
    }

    /// Replaces the merchant's co-brand table (BIN ranges → affiliate codes) with `ranges`, all or none.
    /// A bad range is `co_brand_table_invalid` with its 1-based position in ``GatewayError/rows``.
    public func setCoBrandTable(
        merchantID: String, ranges: [CoBrandRange], scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) {
        guard ranges.count <= FieldLimits.coBrandRanges else {
            throw RowProblems.refuse(
                .coBrandTableInvalid, row: FieldLimits.coBrandRanges + 1, label: "row",
                "at most \(FieldLimits.coBrandRanges) ranges")
        }
        var problems = RowProblems()
        for (index, range) in ranges.enumerated() {
            if let message = Self.problem(of: range) { problems.add(row: index + 1, message) }
        }
        try problems.check(.coBrandTableInvalid, label: "row")
        try writeCoBrandTable(merchantID: merchantID, ranges: ranges, by: requestScope)
    }

    /// Replaces the co-brand table with rows as written (``CoBrandRow``), all or none; a bad row is
    /// `co_brand_table_invalid` naming its 1-based position in ``GatewayError/rows``. Returns the ranges stored,
    /// in ``coBrandTable(merchantID:)``'s order.
    @discardableResult
    public func setCoBrandTable(
        merchantID: String, rows: [CoBrandRow], scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> [CoBrandRange] {
        try storeCoBrandTable(
            merchantID: merchantID, rows: rows.enumerated().map { ($0.offset + 1, .success($0.element)) }, label: "row",
            by: requestScope)
    }

    /// Replaces the co-brand table with a CSV whose header is ``coBrandCSVHeader``, all or none; bad rows are
    /// named by line (the header is line 1). Returns the ranges stored, in ``coBrandTable(merchantID:)``'s order.
    @discardableResult
    public func loadCoBrandTable(
        merchantID: String, csv: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> [CoBrandRange] {
        let lines = CSV.parse(csv)
        let header = lines.first?.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.joined(separator: ",")
        guard header == Self.coBrandCSVHeader else {
            throw RowProblems.refuse(
                .coBrandTableInvalid, row: 1, label: "line", "the header must be \(Self.coBrandCSVHeader)")
        }
        var rows: [(Int, Result<CoBrandRow, RowText>)] = []
        for (offset, fields) in lines.enumerated().dropFirst() where !(fields.count == 1 && fields[0].isEmpty) {
            let trimmed = fields.map { $0.trimmingCharacters(in: .whitespaces) }
            rows.append(
                (
                    offset + 1,
                    trimmed.count == 3
                        ? .success(CoBrandRow(binLow: trimmed[0], binHigh: trimmed[1], affiliateCode: trimmed[2]))
                        : .failure(RowText("3 fields (bin_low,bin_high,affiliate_code), not \(trimmed.count)"))
                ))
        }
        return try storeCoBrandTable(merchantID: merchantID, rows: rows, label: "line", by: requestScope)
    }

    /// A row's problem, as the error shows it.
    struct RowText: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Validates every row (numbered for the error), then stores the table in one transaction.
    private func storeCoBrandTable(
        merchantID: String, rows: [(number: Int, row: Result<CoBrandRow, RowText>)], label: String,
        by requestScope: RequestScope
    ) throws(GatewayError) -> [CoBrandRange] {
        guard rows.count <= FieldLimits.coBrandRanges else {
            throw RowProblems.refuse(
                .coBrandTableInvalid, row: rows[FieldLimits.coBrandRanges].number, label: label,
                "at most \(FieldLimits.coBrandRanges) ranges")
        }
        var problems = RowProblems()
        var ranges: [CoBrandRange] = []
        for (number, parsed) in rows {
            switch parsed.flatMap(Self.range) {
            case .success(let range): ranges.append(range)
            case .failure(let problem): problems.add(row: number, problem.message)
            }
        }
        try problems.check(.coBrandTableInvalid, label: label)
        try writeCoBrandTable(merchantID: merchantID, ranges: ranges, by: requestScope)
        // In the order the table is read back.
        return ranges.sorted { ($0.low, $0.high, $0.code) < ($1.low, $1.high, $1.code) }
    }

    /// The range a row describes, or every problem it has.
    private static func range(_ row: CoBrandRow) -> Result<CoBrandRange, RowText> {
        var messages: [String] = []
        let low = bin(row.binLow, pad: "0")
        let high = bin(row.binHigh, pad: "9")
        if low == nil { messages.append("bin_low must be 6 to 8 digits") }
        if high == nil { messages.append("bin_high must be 6 to 8 digits") }
        if !isAffiliateCode(row.affiliateCode) {
            messages.append("affiliate_code must be 1 to 20 ASCII letters or digits")
        }
        if let low, let high, low > high { messages.append("bin_low must not be above bin_high") }
        guard let low, let high, messages.isEmpty else { return .failure(RowText(messages.joined(separator: "; "))) }
        return .success(CoBrandRange(low: low, high: high, code: row.affiliateCode))
    }

    /// Stores the validated table and its audit entry in one transaction.
    private func writeCoBrandTable(
        merchantID: String, ranges: [CoBrandRange], by requestScope: RequestScope
    ) throws(GatewayError) {
        try auditedWrite(
            merchantID, AuditLog.Action.coBrandTableReplace, detail: ["ranges": String(ranges.count)], by: requestScope
        ) {
            try $0.replaceCoBrandTable(merchantID: merchantID, ranges: ranges)
        }
    }

    /// A BIN of 6 to 8 digits as an 8-digit number, padded on the right with `pad`.
    private static func bin(_ text: String, pad: Character) -> Int64? {
        guard (6...8).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text + String(repeating: pad, count: 8 - text.utf8.count))
    }

    private static func problem(of range: CoBrandRange) -> String? {
        if !isAffiliateCode(range.code) { return "affiliate_code must be 1 to 20 ASCII letters or digits" }
        if !(range.low >= 0 && range.low <= range.high && range.high <= 99_999_999) {
            return "the range must be low ≤ high, 8-digit BINs"
        }
        return nil
    }
}
