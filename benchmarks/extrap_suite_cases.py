"""The modeling test cases of Extra-P 4.2.5 as data tables (used by benchmarks/extrap_suite.py).

Each table names the test it re-creates as "Extra-P 4.2.5, tests/<file>::<test>". An exponent triple (a, b, c) is
Extra-P's `CompoundTerm.create(a, b, c)`, the term x^(a/b) * log2(x)^c (extrap/entities/terms.py); a term whose a
is 0 has no power of x, one whose c is 0 no logarithm. Standard library only: extrap_suite.py computes the values
from these generating functions; the one measured file (MEASURED) is the only table of values.
"""

from __future__ import annotations

Exponents = tuple[int, int, int]  # (a, b, c): x^(a/b) * log2(x)^c

# Extra-P 4.2.5, tests/test_basic_modeler.py::test_modeling; every test_modeling* of
# tests/test_multi_param_modeler.py walks the same list (pairs, triples, quadruples of neighbours)
BUILDING_BLOCKS: tuple[Exponents, ...] = (
    (0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 0), (1, 4, 1), (1, 3, 1), (1, 4, 2), (1, 3, 2), (1, 2, 0), (1, 2, 1),
    (1, 2, 2), (2, 3, 0), (3, 4, 0), (2, 3, 1), (3, 4, 1), (4, 5, 0), (2, 3, 2), (3, 4, 2), (1, 1, 0), (1, 1, 1),
    (1, 1, 2), (5, 4, 0), (5, 4, 1), (4, 3, 0), (4, 3, 1), (3, 2, 0), (3, 2, 1), (3, 2, 2), (5, 3, 0), (7, 4, 0),
    (2, 1, 0), (2, 1, 1), (2, 1, 2), (9, 4, 0), (7, 3, 0), (5, 2, 0), (5, 2, 1), (5, 2, 2), (8, 3, 0), (11, 4, 0),
    (3, 1, 0), (3, 1, 1),
)
BUILDING_BLOCK_CONSTANT = 200.0
BUILDING_BLOCK_COEFFICIENT = 10.0
BASIC_POINTS: tuple[float, ...] = (2, 4, 8, 16, 32)

# Extra-P 4.2.5, tests/test_basic_modeler.py::test_modeling2 and ::test_modeling3: 24 of the building blocks.
# test_modeling2: constant 200, term coefficient each of COEFFICIENTS; test_modeling3: term coefficient 1000,
# constant each of COEFFICIENTS.
SUBSET: tuple[Exponents, ...] = (
    (0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 2, 0), (1, 2, 1), (1, 2, 2), (2, 3, 0), (1, 1, 0), (1, 1, 1), (1, 1, 2),
    (5, 4, 0), (4, 3, 0), (3, 2, 0), (5, 3, 0), (7, 4, 0), (2, 1, 0), (9, 4, 0), (7, 3, 0), (5, 2, 0), (5, 2, 2),
    (8, 3, 0), (11, 4, 0), (3, 1, 0), (3, 1, 1),
)
COEFFICIENTS: tuple[float, ...] = (200, 3000, 40000, 500000)
SUBSET_CONSTANT = 200.0
SUBSET_COEFFICIENT = 1000.0

# Extra-P 4.2.5, tests/test_basic_modeler.py::test_modeling_negative_exponents: the mirror images of SUBSET
# (x^(-a/b) * log2(x)^-c, in the same order), term coefficient 1000, constant each of NEGATIVE_CONSTANTS; the test
# sets the modeler's allow_negative_exponents.
NEGATIVE: tuple[Exponents, ...] = tuple((-a, b, -c) for a, b, c in SUBSET)
NEGATIVE_CONSTANTS: tuple[float, ...] = (2, 30, 400, 5000)
NEGATIVE_COEFFICIENT = 1000.0

# Extra-P 4.2.5, tests/test_basic_modeler.py::test_compare (and tests/test_refining_modeler.py::test_compare, which
# models the same values): the generating function of each case, (term or None for a constant, constant,
# coefficient). The tests list the values c + k * term(x) at COMPARE_POINTS; extrap_suite.py recomputes them (they
# agree with the listed ones to the last bit or one unit in the last place). The tests turn cross-validation off;
# the refining test also compares hypotheses by RSS.
COMPARE_POINTS: tuple[float, ...] = (4, 8, 16, 32, 64, 128)
COMPARE: tuple[tuple[Exponents | None, float, float], ...] = (
    (None, 124.67898380110276, 0.0),
    ((0, 1, 1), 392.837968713381, 683.8645895889935),
    ((0, 1, 2), 138.69179452369758, 112.44445041582443),
    ((1, 4, 0), 231.8031252715932, 757.5927278025262),
    ((1, 3, 0), 147.40207355905747, 740.6554582848072),
    ((1, 4, 1), 662.1669933486077, 136.57938776640577),
    ((1, 3, 1), 535.6622118860412, 447.75148218635366),
    ((1, 4, 2), 412.5706706079675, 996.343695251814),
    ((1, 3, 2), 93.11229615417925, 20.367438006670188),
    ((1, 2, 0), 939.8019758412179, 402.94640866510485),
    ((1, 2, 1), 198.49843369241415, 330.31007853365884),
    ((1, 2, 2), 364.8953574839538, 955.112891429775),
    ((2, 3, 0), 210.3330694987003, 216.92681699057178),
    ((3, 4, 0), 584.9013580111865, 547.3819137326248),
    ((2, 3, 1), 953.7431095545323, 838.6830078923111),
    ((3, 4, 1), 355.50475595529707, 203.8586065472728),
    ((4, 5, 0), 836.4136945625079, 988.9778707606993),
    ((2, 3, 2), 30.370684174349353, 735.0460670350777),
    ((3, 4, 2), 868.3557741916711, 651.1510359543278),
    ((1, 1, 0), 218.35982887307853, 796.5944762009765),
    ((1, 1, 1), 729.8185276288646, 193.81268721358396),
    ((1, 1, 2), 640.8857481060144, 219.18401331861853),
    ((5, 4, 0), 41.41439439883205, 336.0107050284518),
    ((5, 4, 1), 334.34344019665406, 396.1666489172391),
    ((4, 3, 0), 646.7639733950962, 836.1733802023176),
    ((4, 3, 1), 961.3235324936308, 976.4308028867101),
    ((3, 2, 0), 993.5060588040174, 789.8477910359313),
    ((3, 2, 1), 306.3138276450713, 176.2989470011036),
    ((3, 2, 2), 623.7521800036756, 545.819243769916),
    ((5, 3, 0), 674.515344060474, 93.52470814254),
    ((7, 4, 0), 192.79185213528302, 921.0172026961501),
    ((2, 1, 0), 601.3899361738712, 695.3677746959734),
    ((2, 1, 1), 95.64610607936808, 399.1728717576563),
    ((2, 1, 2), 910.0933475245264, 649.3303470713025),
    ((9, 4, 0), 991.6538373014305, 196.89404893784854),
    ((7, 3, 0), 454.80058623925424, 800.545149328823),
    ((5, 2, 0), 444.6771885244102, 788.914623707213),
    ((5, 2, 1), 561.6799261002398, 118.03818227888634),
    ((5, 2, 2), 98.86684880610103, 982.9958000733947),
    ((8, 3, 0), 119.32012560773262, 194.108049319692),
    ((11, 4, 0), 335.21389505653997, 713.4600389668701),
    ((3, 1, 0), 854.0891091206599, 475.68703018220896),
    ((3, 1, 1), 498.14812816021515, 788.4374477528575),
)

# Extra-P 4.2.5, tests/test_multi_param_modeler.py: the values each parameter takes; the points are the full grid
# (every combination), as in the tests.
GRID_VALUES: tuple[float, ...] = (2, 4, 8, 16, 32)  # test_modeling, _plus, _3p, _3p_plus, _3p_mul_plus
GRID_VALUES_4P: tuple[float, ...] = (2, 4, 8, 10, 12)  # test_modeling_4p

# Per multi-parameter test: how the neighbouring building blocks combine, the constant and the coefficients.
# "product": one term, the product of one block per parameter; "sum": one term per parameter;
# "x + y*z": a term of x plus a term of the product of y and z.
MULTI: tuple[tuple[str, str, int, str, float, tuple[float, ...]], ...] = (
    # (test, family, parameters, shape, constant, term coefficients)
    ("test_modeling", "2 parameters, product", 2, "product", 200.0, (10.0,)),
    ("test_modeling_plus", "2 parameters, sum", 2, "sum", 200.0, (10.0, 20.0)),
    ("test_modeling_3p", "3 parameters, product", 3, "product", 200.0, (10.0,)),
    ("test_modeling_3p_plus", "3 parameters, sum", 3, "sum", 200.0, (10.0, 20.0, 30.0)),
    ("test_modeling_3p_mul_plus", "3 parameters, x + y*z", 3, "x + y*z", 200.0, (100.0, 2.0)),
    ("test_modeling_4p", "4 parameters, product", 4, "product", 20000.0, (10.0,)),
)

# Extra-P 4.2.5, tests/test_segmented_modeler.py: one measured value per point, f(x) below the change point and
# g(x) from it on. The tests model the median.
Function = tuple[float, float, Exponents | None]  # (constant, coefficient, term or None)
SEGMENTED: tuple[tuple[str, tuple[float, ...], float, Function, Function], ...] = (
    # (test, points in the test's order, change point, f, g)
    ("test_segmented_data_one", tuple(range(1, 11)), 6, (0.0, 1.0, (2, 1, 0)), (30.0, 1.0, (1, 1, 0))),
    ("test_segmented_data_one_minimal_number_of_measurements", tuple(range(1, 10)), 5,
     (0.0, 1.0, (2, 1, 0)), (50.0, 4.0, (1, 1, 0))),
    ("test_segmented_data_two", tuple(range(4, 41, 4)), 22, (0.0, 1.0, (0, 1, 1)), (0.0, 1.0, (2, 1, 0))),
    ("test_no_segmentation", tuple(range(10, 101, 10)), 50, (0.0, 1.0, (2, 1, 1)), (0.0, 1.0, (2, 1, 1))),
    ("test_exmple_two", tuple(range(1, 11)), 6, (67.0, 63.0, (1, 4, 2)), (93.0, 64.0, (5, 3, 0))),
    ("test_linear_square_segmentation", tuple(range(15)), 7, (0.0, 2.0, (1, 1, 0)), (14.0, 1.0, (2, 1, 0))),
    # the same functions, the points interleaved (zip of the two halves, so x = 14 drops out)
    ("test_unordered_measurements", tuple(v for pair in zip(range(7), range(7, 15)) for v in pair), 7,
     (0.0, 2.0, (1, 1, 0)), (14.0, 1.0, (2, 1, 0))),
)

# Extra-P 4.2.5, tests/test_refining_modeler.py::test_general (and tests/test_modeling.py::
# test_default_single_parameter_modeling): the measured file tests/data/text/one_parameter_6.txt, repetitions per
# point. The test expects a constant model for met1 and a single term x^2 for the others.
MEASURED_POINTS: tuple[float, ...] = (1000, 2000, 4000, 8000, 16000)
MEASURED: tuple[tuple[str, Exponents | None, tuple[tuple[float, ...], ...]], ...] = (
    ("met1", None, ((4.1, 3.9, 4.0, 4.0, 4.1), (4.1, 3.9, 4.0, 4.0, 4.1), (4.1, 3.9, 4.3, 4.0, 4.1),
                    (4.1, 3.9, 4.0, 4.0, 4.1), (4.1, 3.9, 4.9, 4.0, 4.1))),
    ("met2", (2, 1, 0), ((1, 1, 1, 1, 1), (4, 4, 4, 3.99, 4.01), (16, 15.999, 16.01, 16.01, 15.99),
                         (64, 64, 64, 64.01, 63.99), (256.01, 255.99, 256, 256))),
    ("met3", (2, 1, 0), ((2, 2, 2, 2, 2.001), (6.1, 5.9, 6.0, 6.0, 6.1), (19.1, 18.9, 19, 19.0, 19.1),
                         (68.1, 67.9, 68.0, 68.0, 68.1), (261.1, 260.9, 260.9, 261.0, 261.1))),
    ("met4", (2, 1, 0), ((1000000, 1000001, 1000002), (4000000, 4000004, 4000002),
                         (16000000, 16000003, 16000005), (64000000, 64000003, 64000002),
                         (256000000, 256000003, 256000002))),
)
