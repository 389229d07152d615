import Foundation

/// The payment figures of a merchant for a time span: counts, approval rate and volume per currency.
public struct PaymentFigures: Sendable, Hashable {
    /// Every payment created in the span.
    public var count = 0
    /// Payments whose authorization was approved (authorized, captured, refunded in part or whole, or voided).
    public var approved = 0
    /// Payments that failed (declined, or refused before the processor answered).
    public var declined = 0
    /// Payments still waiting for the processor's outcome (processing or unknown).
    public var pending = 0
    /// Per currency, ordered by code; amounts are never added across currencies.
    public var currencies: [CurrencyFigures] = []

    public init() {}

    /// `approved / (approved + declined)` as a percentage with two decimals (`"66.67"`), rounded half up;
    /// nil while no payment of the span is settled.
    public var approvalRate: String? {
        let settled = approved + declined
        guard settled > 0 else { return nil }
        // Hundredths of a percent, rounded half up, in integers only.
        let hundredths = (approved * 20_000 + settled) / (2 * settled)
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100)." + String(repeating: "0", count: 2 - fraction.count) + fraction
    }

    mutating func add(_ row: PaymentTallyRow) {
        count += row.count
        let isApproved = PaymentFigures.approvedStatuses.contains(row.status)
        if isApproved {
            approved += row.count
        } else if row.status == .failed {
            declined += row.count
        } else {
            pending += row.count
        }
        var entry: CurrencyFigures
        let index = currencies.firstIndex { $0.currency == row.currency }
        if let index { entry = currencies[index] } else { entry = CurrencyFigures(currency: row.currency) }
        entry.count += row.count
        if isApproved {
            entry.approved += row.count
            entry.volume += row.amount
        }
        if let index {
            currencies[index] = entry
        } else {
            currencies.append(entry)
            currencies.sort { $0.currency < $1.currency }
        }
    }

    /// The statuses of a payment whose authorization the processor approved.
    public static let approvedStatuses: Set<PaymentStatus> = [
        .authorized, .capturePending, .captured, .refundPending, .partiallyRefunded, .refunded, .voidPending, .voided,
        .chargedBack,
    ]
}

/// A span's figures in one currency.
public struct CurrencyFigures: Sendable, Hashable {
    /// ISO 4217 alphabetic code.
    public var currency: String
    /// Payments in this currency.
    public var count = 0
    /// Approved payments in this currency.
    public var approved = 0
    /// The sum of the approved payments' authorized amounts, in minor units of ``currency``.
    public var volume: Int64 = 0

    public init(currency: String) { self.currency = currency }
}

/// How many failed payments carry a decline code.
public struct DeclineCodeCount: Sendable, Hashable {
    /// The processor's decline code (or the gateway's short cause, e.g. `processor_unavailable`).
    public var code: String
    public var count: Int

    public init(code: String, count: Int) {
        self.code = code
        self.count = count
    }
}

/// A chart's worth of figures: consecutive buckets of one width, with their totals and decline codes.
public struct PaymentSeries: Sendable, Hashable {
    /// The width of a bucket.
    public enum Interval: String, Sendable {
        case hour
        case day

        /// The width in seconds.
        public var seconds: Int { self == .hour ? 3600 : 86_400 }
    }

    public var interval: Interval
    /// The start of the first bucket (a whole UTC hour or day).
    public var from: Date
    /// The end of the last bucket (exclusive): the end of the current hour or day.
    public var to: Date
    /// Oldest first; every bucket of the span, empty ones included.
    public var buckets: [PaymentBucket]
    /// The whole span's figures.
    public var totals: PaymentFigures
    /// The failed payments' codes, most frequent first (then by code).
    public var declineCodes: [DeclineCodeCount]
}

/// One bucket of a ``PaymentSeries``: the payments created from ``start`` for one interval.
public struct PaymentBucket: Sendable, Hashable {
    public var start: Date
    public var figures: PaymentFigures
}

/// `GET /v1/reports/overview`: the last 24 hours by hour and the last 30 days by day.
public struct OverviewReport: Sendable, Hashable {
    /// The gateway clock's time the report was computed at.
    public var generatedAt: Date
    /// 24 hourly buckets, the last one holding the current hour.
    public var hourly: PaymentSeries
    /// 30 daily buckets (UTC days), the last one holding today.
    public var daily: PaymentSeries
}

extension GatewayService {
    /// How many hourly and daily buckets ``overview(merchant:)`` reports.
    public static let overviewHours = 24
    public static let overviewDays = 30

    /// The merchant's overview figures at the gateway clock's time: payment counts, approval rate, volume per
    /// currency and decline codes, per hour for the last 24 hours and per UTC day for the last 30 days.
    public func overview(merchant: Merchant) throws(GatewayError) -> OverviewReport {
        let now = clock.now()
        return OverviewReport(
            generatedAt: now, hourly: try series(merchant, .hour, count: Self.overviewHours, now: now),
            daily: try series(merchant, .day, count: Self.overviewDays, now: now))
    }

    private func series(
        _ merchant: Merchant, _ interval: PaymentSeries.Interval, count: Int, now: Date
    ) throws(GatewayError) -> PaymentSeries {
        let width = interval.seconds
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let end = (seconds / Int64(width) + 1) * Int64(width)
        let from = Date(timeIntervalSince1970: TimeInterval(end - Int64(width * count)))
        let to = Date(timeIntervalSince1970: TimeInterval(end))
        let rows = try read { tx in
            try tx.paymentTally(
                merchantID: merchant.id, environment: merchant.environment, from: from, to: to, bucketSeconds: width)
        }
        var buckets = Array(repeating: PaymentFigures(), count: count)
        var totals = PaymentFigures()
        var codes: [String: Int] = [:]
        for row in rows where (0..<count).contains(row.bucket) {
            buckets[row.bucket].add(row)
            totals.add(row)
            if row.status == .failed { codes[row.failureCode ?? "unspecified", default: 0] += row.count }
        }
        return PaymentSeries(
            interval: interval, from: from, to: to,
            buckets: buckets.enumerated().map {
                PaymentBucket(start: from.addingTimeInterval(TimeInterval($0.offset * width)), figures: $0.element)
            },
            totals: totals,
            declineCodes: codes.map { DeclineCodeCount(code: $0.key, count: $0.value) }.sorted {
                ($0.count, $1.code) > ($1.count, $0.code)
            })
    }
}
