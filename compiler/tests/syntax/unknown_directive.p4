#inclde <core.p4>
