import Foundation

/// An ISO 3166-1 alpha-2 country code (`"TW"`, `"US"`), checked against the officially assigned list.
///
/// Encodes to and decodes from its code string.
public struct CountryCode: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The two upper-case letters.
    public let code: String

    /// The country with this code. Only upper-case, officially assigned codes are accepted.
    public init(_ code: String) throws(MoneyError) {
        guard CountryCode.assigned.contains(code) else {
            throw MoneyError(.invalidCountryCode, "'\(code.prefix(16))' is not an ISO 3166-1 alpha-2 country code")
        }
        self.code = code
    }

    /// The code.
    public var description: String { code }

    /// Decodes the code string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try CountryCode(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the code string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    /// Every officially assigned ISO 3166-1 alpha-2 code.
    public static let assigned: Set<String> = Set(
        """
        AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY \
        BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK \
        FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR \
        IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK \
        ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM \
        PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF \
        TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
        """.split(separator: " ").map(String.init))

    /// Taiwan.
    public static let tw = try! CountryCode("TW")
    /// The United States.
    public static let us = try! CountryCode("US")
    /// Japan.
    public static let jp = try! CountryCode("JP")
}
