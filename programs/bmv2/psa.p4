/* <bmv2/psa.p4>: the PSA architecture as BMv2's psa_switch implements it.
 *
 * Written for this project. The bundled <psa.p4> already uses psa_switch's
 * widths and special values (32-bit ports, PSA_PORT_RECIRCULATE
 * 0xfffffffa, PSA_PORT_CPU 0xfffffffd), so this header only includes it;
 * programs written for p4c's BMv2 backend include this name.
 */
#include <psa.p4>
