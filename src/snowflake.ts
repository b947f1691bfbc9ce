// The contract's identifier rule, on the lowest layer: the key builder, the validators and the
// schemas all read it here.

/** Decimal snowflake: 1 to 20 ASCII digits, no leading zero. */
export const SNOWFLAKE_PATTERN = '^[1-9][0-9]{0,19}$'
