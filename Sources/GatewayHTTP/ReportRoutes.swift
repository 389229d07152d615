import OrchardHTTP
import Foundation
import Gateway

/// `GET /v1/reports/overview` (`openapi.yaml`, tag "Reports"): the console's Overview charts.
extension GatewayAPI {
    func getOverview(_ call: Call) throws -> HTTPResponse {
        let report = try gateway.overview(merchant: call.merchant)
        return Wire.response([
            "generated_at": Wire.time(report.generatedAt), "hourly": Self.seriesObject(report.hourly),
            "daily": Self.seriesObject(report.daily),
        ])
    }

    static func seriesObject(_ series: PaymentSeries) -> [String: Any] {
        [
            "interval": series.interval.rawValue, "from": Wire.time(series.from), "to": Wire.time(series.to),
            "buckets": series.buckets.map { bucket -> [String: Any] in
                var object = figuresObject(bucket.figures)
                object["start"] = Wire.time(bucket.start)
                return object
            },
            "totals": figuresObject(series.totals),
            "decline_codes": series.declineCodes.map { ["code": $0.code, "count": $0.count] as [String: Any] },
        ]
    }

    static func figuresObject(_ figures: PaymentFigures) -> [String: Any] {
        [
            "count": figures.count, "approved": figures.approved, "declined": figures.declined,
            "pending": figures.pending, "approval_rate": Wire.value(figures.approvalRate),
            "currencies": figures.currencies.map { entry -> [String: Any] in
                [
                    "currency": entry.currency, "count": entry.count, "approved": entry.approved,
                    "volume": Wire.amount(entry.volume, entry.currency),
                ]
            },
        ]
    }
}
