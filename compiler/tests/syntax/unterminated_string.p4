@name("ingress.t)
action a() {}
