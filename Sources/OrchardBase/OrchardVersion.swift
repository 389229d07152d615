/// Orchard's release version: what `orchard --version` prints and what the gateway's outbound requests send in
/// `User-Agent` (`Orchard/<number>`). The one place it is written.
package enum OrchardVersion {
    /// The version number (semantic versioning).
    package static let number = "0.1.0"
}
