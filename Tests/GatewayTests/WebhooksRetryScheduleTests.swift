import Foundation
import Testing

@testable import Gateway

@Suite("Webhook retry schedule")
struct WebhooksRetryScheduleTests {
    @Test("the default is 1m, 5m, 30m, 2h, 6h, 12h, 24h: eight attempts, then dead")
    func defaultSchedule() throws {
        let schedule = WebhookRetrySchedule.default
        #expect(schedule.delays == [60, 300, 1800, 7200, 21600, 43200, 86400])
        #expect(schedule.description == "1m,5m,30m,2h,6h,12h,24h")
        #expect(try WebhookRetrySchedule(parsing: "1m,5m,30m,2h,6h,12h,24h") == schedule)
        #expect(schedule.maximumAttempts == 8)
        #expect(throws: Never.self) { try schedule.validate() }
    }

    @Test(
        "the wait after each failed attempt, and none after the last",
        arguments: [
            (0, nil), (1, 60.0), (2, 300.0), (3, 1800.0), (4, 7200.0), (5, 21600.0), (6, 43200.0),
            (7, 86400.0), (8, nil), (9, nil),
        ] as [(Int, TimeInterval?)])
    func backoff(attempt: Int, delay: TimeInterval?) {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(WebhookRetrySchedule.default.delay(afterAttempt: attempt) == delay)
        #expect(WebhookRetrySchedule.default.nextAttempt(afterAttempt: attempt, at: at) == delay.map { at + $0 })
    }

    @Test(
        "the text form parses units ms, s, m, h, d and formats back canonically",
        arguments: [
            ("1m,5m,30m,2h,6h,12h,24h", [60, 300, 1800, 7200, 21600, 43200, 86400], "1m,5m,30m,2h,6h,12h,24h"),
            (" 1m , 5m ,30m ", [60, 300, 1800], "1m,5m,30m"),
            ("90s,120s", [90, 120], "90s,2m"),
            ("1d,2d", [86400, 172_800], "24h,48h"),
            ("250ms,1500ms,2000ms", [0.25, 1.5, 2], "250ms,1500ms,2s"),
            ("1H,1M,1S", [3600, 60, 1], "1h,1m,1s"),
            ("none", [], "none"),
            ("NONE", [], "none"),
            ("30d", [2_592_000], "720h"),
        ] as [(String, [TimeInterval], String)])
    func parseAndFormat(text: String, delays: [TimeInterval], formatted: String) throws {
        let schedule = try WebhookRetrySchedule(parsing: text)
        #expect(schedule.delays == delays)
        #expect(schedule.description == formatted)
        #expect(try WebhookRetrySchedule(parsing: schedule.description) == schedule)
    }

    @Test(
        "bad text is refused with a stable code",
        arguments: [
            ("", "retry_schedule_malformed"), ("  ", "retry_schedule_malformed"), ("1", "retry_schedule_malformed"),
            ("m", "retry_schedule_malformed"), ("1x", "retry_schedule_malformed"),
            ("1m,,5m", "retry_schedule_malformed"), ("1m,", "retry_schedule_malformed"),
            ("-1m", "retry_schedule_malformed"), ("1.5m", "retry_schedule_malformed"),
            ("1 m", "retry_schedule_malformed"), ("1m;5m", "retry_schedule_malformed"),
            ("9999999999s", "retry_schedule_malformed"),
            ("0s", "retry_schedule_out_of_range"), ("31d", "retry_schedule_out_of_range"),
            ("0ms,1m", "retry_schedule_out_of_range"),
            (Array(repeating: "1s", count: 65).joined(separator: ","), "retry_schedule_out_of_range"),
        ])
    func refused(text: String, code: String) {
        #expect(throws: WebhookRetryScheduleError(code: .init(rawValue: code))) {
            try WebhookRetrySchedule(parsing: text)
        }
    }

    @Test("a schedule survives JSON coding, and validate() checks hand-built ones")
    func codingAndValidation() throws {
        let data = try JSONEncoder().encode(WebhookRetrySchedule.default)
        #expect(try JSONDecoder().decode(WebhookRetrySchedule.self, from: data) == .default)
        #expect(throws: WebhookRetryScheduleError(code: .outOfRange)) {
            try WebhookRetrySchedule(delays: [60, -1]).validate()
        }
        #expect(throws: WebhookRetryScheduleError(code: .outOfRange)) {
            try WebhookRetrySchedule(delays: [.nan]).validate()
        }
        #expect(WebhookRetrySchedule(delays: []).maximumAttempts == 1)
    }
}
