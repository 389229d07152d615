import OrchardBase
import Foundation

/// A set of metrics rendered in the Prometheus text exposition format 0.0.4 (`GET /metrics`).
///
/// Counters and histograms are updated by the code that observes events; gauges are read from closures when the
/// registry is rendered (the gateway registers payments by status and the webhook backlog that way). Label values
/// are given in the order of the metric's label names.
public final class MetricsRegistry: Sendable {
    /// The `Content-Type` of ``render()``'s output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private enum Family {
        case counter(Counter)
        case histogram(Histogram)
        case gauge(Gauge)

        var name: String {
            switch self {
            case .counter(let metric): metric.name
            case .histogram(let metric): metric.name
            case .gauge(let metric): metric.name
            }
        }
    }

    private let families = Locked<[Family]>([])

    /// An empty registry.
    public init() {}

    /// The counter `name`, registering it on first use.
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        families.withLock { families in
            if let existing = families.first(where: { $0.name == name }) {
                guard case .counter(let counter) = existing, counter.labelNames == labels else {
                    preconditionFailure("metric \(name) is already registered differently")
                }
                return counter
            }
            let counter = Counter(name: name, help: help, labelNames: labels)
            families.append(.counter(counter))
            return counter
        }
    }

    /// The histogram `name` with upper bounds `buckets` (seconds by default), registering it on first use.
    public func histogram(
        _ name: String, help: String, labels: [String] = [], buckets: [Double] = Histogram.defaultBuckets
    ) -> Histogram {
        families.withLock { families in
            if let existing = families.first(where: { $0.name == name }) {
                guard case .histogram(let histogram) = existing, histogram.labelNames == labels else {
                    preconditionFailure("metric \(name) is already registered differently")
                }
                return histogram
            }
            let histogram = Histogram(name: name, help: help, labelNames: labels, buckets: buckets)
            families.append(.histogram(histogram))
            return histogram
        }
    }

    /// Registers (or replaces) the gauge `name`, whose samples `collect` returns at each rendering: one
    /// `(labelValues, value)` pair per label set.
    public func gauge(
        _ name: String, help: String, labels: [String] = [],
        collect: @escaping @Sendable () -> [(labelValues: [String], value: Double)]
    ) {
        let gauge = Gauge(name: name, help: help, labelNames: labels, collect: collect)
        families.withLock { families in
            if let index = families.firstIndex(where: { $0.name == name }) {
                guard case .gauge = families[index] else {
                    preconditionFailure("metric \(name) is already registered differently")
                }
                families[index] = .gauge(gauge)
            } else {
                families.append(.gauge(gauge))
            }
        }
    }

    /// Registers a label-less gauge reading `value`.
    public func gauge(_ name: String, help: String, value: @escaping @Sendable () -> Double) {
        gauge(name, help: help, labels: []) { [([], value())] }
    }

    /// Every metric in the text exposition format 0.0.4, in registration order, samples sorted by labels.
    public func render() -> String {
        let snapshot = families.withLock { $0 }
        var out = ""
        for family in snapshot {
            switch family {
            case .counter(let metric):
                out += header(metric.name, metric.help, "counter")
                for (labels, value) in metric.samples() {
                    out += sample(metric.name, metric.labelNames, labels, value)
                }
            case .gauge(let metric):
                out += header(metric.name, metric.help, "gauge")
                let samples = metric.collect().filter { $0.labelValues.count == metric.labelNames.count }
                for (labels, value) in samples.sorted(by: { $0.labelValues.lexicographicallyPrecedes($1.labelValues) })
                {
                    out += sample(metric.name, metric.labelNames, labels, value)
                }
            case .histogram(let metric):
                out += header(metric.name, metric.help, "histogram")
                for (labels, state) in metric.samples() {
                    var cumulative: UInt64 = 0
                    for (bound, count) in zip(metric.buckets, state.counts) {
                        cumulative += count
                        out += sample(
                            metric.name + "_bucket", metric.labelNames + ["le"], labels + [formatValue(bound)],
                            Double(cumulative))
                    }
                    out += sample(
                        metric.name + "_bucket", metric.labelNames + ["le"], labels + ["+Inf"], Double(state.count))
                    out += sample(metric.name + "_sum", metric.labelNames, labels, state.sum)
                    out += sample(metric.name + "_count", metric.labelNames, labels, Double(state.count))
                }
            }
        }
        return out
    }

    /// A handler answering ``render()`` with the exposition content type.
    public var handler: HTTPHandler {
        { [self] _, _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": Self.contentType], body: Data(render().utf8))
        }
    }

    private func header(_ name: String, _ help: String, _ type: String) -> String {
        let escapedHelp = help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        return "# HELP \(name) \(escapedHelp)\n# TYPE \(name) \(type)\n"
    }

    private func sample(_ name: String, _ labelNames: [String], _ labelValues: [String], _ value: Double) -> String {
        guard !labelNames.isEmpty else { return "\(name) \(formatValue(value))\n" }
        let pairs = zip(labelNames, labelValues).map { name, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            return "\(name)=\"\(escaped)\""
        }
        return "\(name){\(pairs.joined(separator: ","))} \(formatValue(value))\n"
    }
}

/// A number as the exposition format writes it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
package func formatValue(_ value: Double) -> String {
    if value.isNaN { return "NaN" }
    if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
}

/// A monotonically increasing count per label set.
public final class Counter: Sendable {
    /// The metric name.
    public let name: String
    /// The help text.
    public let help: String
    /// The label names.
    public let labelNames: [String]
    private let values = Locked<[[String]: Double]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// Adds `amount` (not negative) to the count for `labels` (values in label-name order).
    public func increment(by amount: Double = 1, labels: [String] = []) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        precondition(amount >= 0, "a counter only goes up")
        values.withLock { $0[labels, default: 0] += amount }
    }

    /// The count for `labels`.
    public func value(labels: [String] = []) -> Double { values.withLock { $0[labels] ?? 0 } }

    func samples() -> [([String], Double)] {
        values.withLock { $0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
    }
}

/// Observations counted into fixed buckets per label set, with their sum and count.
public final class Histogram: Sendable {
    /// Latency buckets in seconds: 5 ms … 10 s.
    public static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct State {
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    /// The metric name.
    public let name: String
    /// The help text.
    public let help: String
    /// The label names (`le` is added for buckets).
    public let labelNames: [String]
    /// The bucket upper bounds, ascending (`+Inf` is implied).
    public let buckets: [Double]
    private let states = Locked<[[String]: State]>([:])

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = buckets.filter(\.isFinite).sorted()
    }

    /// Records `value` for `labels` (values in label-name order).
    public func observe(_ value: Double, labels: [String] = []) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        let index = buckets.firstIndex { value <= $0 }
        states.withLock { states in
            var state = states[labels] ?? State(counts: Array(repeating: 0, count: buckets.count))
            if let index { state.counts[index] += 1 }
            state.sum += value
            state.count += 1
            states[labels] = state
        }
    }

    /// The number of observations for `labels`.
    public func count(labels: [String] = []) -> UInt64 { states.withLock { $0[labels]?.count ?? 0 } }

    func samples() -> [([String], State)] {
        states.withLock { $0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
    }
}

/// A value read from a closure at rendering time.
final class Gauge: Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    let collect: @Sendable () -> [(labelValues: [String], value: Double)]

    init(
        name: String, help: String, labelNames: [String],
        collect: @escaping @Sendable () -> [(labelValues: [String], value: Double)]
    ) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.collect = collect
    }
}
